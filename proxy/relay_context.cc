#include "proxy/relay_context.h"

#include "proxy/http2_connection.h"
#include "proxy/relayed_call.h"

namespace sparktrace::proxy {

RelayContext::RelayContext(event_base* base) : base_(base) {}

RelayContext::~RelayContext() = default;

void RelayContext::Retire(std::unique_ptr<Http2Connection> connection) {
  retired_connections_.push_back(std::move(connection));
}

void RelayContext::Retire(std::unique_ptr<RelayedCall> call) { retired_calls_.push_back(std::move(call)); }

RelayContext::Resolution* RelayContext::NewResolution(SocketIo* io) {
  resolutions_.push_back({io, this});
  return &resolutions_.back();
}

void RelayContext::EndResolution(Resolution* resolution) {
  resolutions_.remove_if([resolution](const Resolution& entry) { return &entry == resolution; });
}

void RelayContext::AfterEvent() {
  ++depth_;  // what runs here may open scopes of its own; they must not recurse into this
  // Flushing one connection can give another work (bytes sent downstream reopen the upstream's
  // window): go on until no connection is left with something to send.
  while (!to_flush_.empty()) {
    std::vector<Http2Connection*> batch;
    batch.swap(to_flush_);
    for (Http2Connection* connection : batch) connection->Flush();
  }
  retired_calls_.clear();
  retired_connections_.clear();
  --depth_;
}

}  // namespace sparktrace::proxy
