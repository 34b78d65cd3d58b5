#include "cli/store_probe.h"

#include <spdlog/spdlog.h>

#include "tracing/store/open/open_span_store.h"

namespace sparktrace::cli {

StoreProbe::StoreProbe(tracing::store::StoreLocation location, std::chrono::milliseconds interval)
    : location_(std::move(location)), interval_(interval), thread_([this] { Run(); }) {}

StoreProbe::~StoreProbe() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::string StoreProbe::NotReadyReason() const {
  std::lock_guard lock(mu_);
  return reason_;
}

void StoreProbe::Run() {
  std::unique_ptr<tracing::store::SpanStore> store;
  std::string last_logged;
  while (true) {
    const std::string reason = Check(store);
    if (reason != last_logged) {
      if (reason.empty()) {
        spdlog::info("trace store {} is readable", location_.display);
      } else {
        spdlog::warn("trace store not readable: {}", reason);
      }
      last_logged = reason;
    }
    std::unique_lock lock(mu_);
    // /readyz is open to anyone who reaches the port: it says only that the store cannot be read; the
    // reason (libpq's text, the URL without its password) is the log's.
    reason_ = reason.empty() ? "" : std::string(kStoreNotReadable);
    if (wake_.wait_for(lock, interval_, [this] { return stopping_; })) return;
  }
}

std::string StoreProbe::Check(std::unique_ptr<tracing::store::SpanStore>& store) const {
  if (!store) {
    tracing::store::StoreOptions options;
    options.read_only = true;
    options.busy_timeout = std::chrono::seconds(2);
    auto opened = tracing::store::OpenSpanStore(location_, options);
    if (!opened.ok()) return opened.error().message;
    store = std::move(*opened);
  }
  tracing::store::TraceFilter one;
  one.limit = 1;
  auto listed = store->ListTraces(one);
  if (listed.ok()) return "";
  // Reconnect on the next round only when the connection is lost: a query that fails on a healthy
  // one says nothing a new login would change.
  if (store->connection_lost()) store.reset();
  return listed.error().message;
}

}  // namespace sparktrace::cli
