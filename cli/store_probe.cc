#include "cli/store_probe.h"

#include <spdlog/spdlog.h>

#include "tracing/store/open_span_store.h"

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
    std::string reason;
    if (!store) {
      tracing::store::StoreOptions options;
      options.read_only = true;
      options.busy_timeout = std::chrono::seconds(2);
      auto opened = tracing::store::OpenSpanStore(location_, options);
      if (opened.ok()) {
        store = std::move(*opened);
      } else {
        reason = opened.error().message;
      }
    }
    if (store) {
      tracing::store::TraceFilter one;
      one.limit = 1;
      if (auto listed = store->ListTraces(one); !listed.ok()) {
        reason = listed.error().message;
        store.reset();  // reconnect on the next round
      }
    }
    if (reason != last_logged) {
      if (reason.empty()) {
        spdlog::info("trace store {} is readable", location_.display);
      } else {
        spdlog::warn("trace store not readable: {}", reason);
      }
      last_logged = reason;
    }
    std::unique_lock lock(mu_);
    reason_ = reason.empty() ? "" : "trace store not readable: " + reason;
    if (wake_.wait_for(lock, interval_, [this] { return stopping_; })) return;
  }
}

}  // namespace sparktrace::cli
