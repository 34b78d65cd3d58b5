#include "proxy/relay_context.h"

namespace sparktrace::proxy {

RelayContext::RelayContext(event_base* base) : base_(base) {}

RelayContext::~RelayContext() = default;

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
    std::vector<Flushable*> batch;
    batch.swap(to_flush_);
    for (Flushable* connection : batch) connection->Flush();
  }
  // Freeing one may retire another (a call forgetting its stream can close a drained connection).
  while (!retired_.empty()) {
    std::vector<std::unique_ptr<Retirable>> batch;
    batch.swap(retired_);
  }
  --depth_;
}

}  // namespace sparktrace::proxy
