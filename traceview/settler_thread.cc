#include "traceview/settler_thread.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <utility>

namespace sparktrace::traceview {

SettlerThread::SettlerThread(SettlerOptions options, std::shared_ptr<SettlerMetrics> metrics,
                             StoreOpener open_store)
    : settler_(options, metrics),
      metrics_(std::move(metrics)),
      open_store_(std::move(open_store)),
      thread_([this] { Run(); }) {}

SettlerThread::~SettlerThread() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SettlerThread::Run() {
  pthread_setname_np(pthread_self(), "settler");
  std::unique_ptr<tracing::store::SpanStore> store;
  bool reported = false;  // the last failure to open was logged: log the next only after a success
  while (true) {
    {
      // The first pass waits an interval too: the store exporter creates the store first.
      std::unique_lock lock(mu_);
      if (wake_.wait_for(lock, settler_.options().interval, [this] { return stopping_; })) return;
    }
    if (!store) {
      auto opened = open_store_();
      if (!opened.ok()) {
        metrics_->AddError();
        if (!reported) spdlog::warn("settling: cannot open the store: {}", opened.error().message);
        reported = true;
        continue;
      }
      store = std::move(opened).value();
      reported = false;
    }
    auto pass = settler_.RunPass(*store, std::chrono::system_clock::now());
    if (!pass.ok()) {
      spdlog::warn("settling: {}", pass.error().message);
      store.reset();  // opened again for the next pass, as the trace view does after an error
    }
  }
}

}  // namespace sparktrace::traceview
