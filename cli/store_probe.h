#pragma once
// StoreProbe: whether `sparktrace ui` can read its store, for /readyz. A thread of its own opens the
// store (read-only) and asks it one small question every `interval`; the admin thread only reads the
// last answer, so a store that hangs never holds a probe (admin/admin_server.h: probes never wait).
//
// Lifetime: the thread runs from construction to destruction.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "tracing/store/span_store.h"
#include "tracing/store/store_location.h"

namespace sparktrace::cli {

class StoreProbe {
 public:
  StoreProbe(tracing::store::StoreLocation location, std::chrono::milliseconds interval);
  ~StoreProbe();
  StoreProbe(const StoreProbe&) = delete;
  StoreProbe& operator=(const StoreProbe&) = delete;

  // "" once the store answered the last question; otherwise kStoreNotReadable (or that it was not
  // checked yet). The reason itself is logged, never shown here.
  std::string NotReadyReason() const;

  static constexpr std::string_view kStoreNotReadable = "trace store not readable";

 private:
  void Run();
  // One question to the store, opening it first when there is none: "" or why it failed.
  std::string Check(std::unique_ptr<tracing::store::SpanStore>& store) const;

  const tracing::store::StoreLocation location_;
  const std::chrono::milliseconds interval_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::string reason_ = "trace store not checked yet";
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sparktrace::cli
