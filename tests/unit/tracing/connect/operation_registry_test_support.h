#pragma once
// Shared by the OperationRegistry tests: gRPC status codes, a recording sink, the registry's options
// for a test, and builders of operations and of the ends of their calls.
//
// Time is explicit SteadyTime values and Sweep(now) is called by the test; the registry is built
// with a sweep interval of a day so that its own sweeper thread (which sweeps at the real
// steady_clock::now()) never runs during a test.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracing/connect/operation_registry.h"

namespace sparktrace::tracing::connect {

inline constexpr int kOk = 0;
inline constexpr int kCancelled = 1;
inline constexpr int kUnknown = 2;
inline constexpr int kInvalidArgument = 3;
inline constexpr int kDeadlineExceeded = 4;
inline constexpr int kNotFound = 5;
inline constexpr int kInternal = 13;
inline constexpr int kUnavailable = 14;

inline constexpr char kDisconnected[] =
    "[INVALID_CURSOR.DISCONNECTED] The cursor is invalid. The cursor has been disconnected by the server.";

// A fixed origin far from the steady clock's epoch, so "earlier than the start" is representable.
inline SteadyTime At(std::chrono::steady_clock::duration offset) {
  return SteadyTime(std::chrono::hours(1000)) + offset;
}

// Keeps a copy of every operation handed over, in order. Guarded because the registry may call it
// from its sweeper thread (which these tests keep idle, but the sink must not rely on that).
class RecordingOperationSink final : public OperationSink {
 public:
  void OnOperationEnded(const Operation& operation) override {
    std::lock_guard lock(mu_);
    ended_.push_back(operation);
  }
  std::vector<Operation> ended() const {
    std::lock_guard lock(mu_);
    return ended_;
  }
  std::size_t count() const {
    std::lock_guard lock(mu_);
    return ended_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<Operation> ended_;
};

inline OperationRegistryOptions TestOptions() {
  OperationRegistryOptions options;
  options.linger = std::chrono::seconds(30);
  options.sweep_interval = std::chrono::hours(24);
  return options;
}

inline Operation NewOperation(std::string operation_id, bool reattachable, SteadyTime started_at,
                              std::string session_id = "session-a") {
  Operation operation;
  operation.trace_id[15] = 1;
  operation.span_id[7] = 2;
  operation.sampled = true;
  operation.started_at = started_at;
  operation.reattachable = reattachable;
  operation.session_id = std::move(session_id);
  operation.operation_id = std::move(operation_id);
  return operation;
}

inline OperationCallEnd StreamEnd(SteadyTime at, int status_code = kOk, std::string message = {}) {
  OperationCallEnd end;
  end.role = OperationCallEnd::Role::kStream;
  end.at = at;
  end.status_code = status_code;
  end.status_message = std::move(message);
  return end;
}

inline OperationCallEnd ReleaseAllEnd(SteadyTime at, int status_code = kOk) {
  OperationCallEnd end;
  end.role = OperationCallEnd::Role::kReleaseAll;
  end.at = at;
  end.status_code = status_code;
  return end;
}

inline OperationCallEnd OtherEnd(SteadyTime at) {
  OperationCallEnd end;
  end.role = OperationCallEnd::Role::kOther;
  end.at = at;
  return end;
}

inline bool HasEvent(const Operation& operation, std::string_view name) {
  return std::any_of(operation.events.begin(), operation.events.end(),
                     [&](const OperationEvent& event) { return event.name == name; });
}

inline const OperationEvent* FindEvent(const Operation& operation, std::string_view name) {
  for (const OperationEvent& event : operation.events) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

inline const AttributeValue* FindAttributeValue(const std::vector<Attribute>& attributes,
                                                std::string_view key) {
  for (const Attribute& attribute : attributes) {
    if (attribute.key == key) return &attribute.value;
  }
  return nullptr;
}

class OperationRegistryTest : public testing::Test {
 protected:
  // A reattachable operation whose ExecutePlan stream was cut at `cut_at` (OK, no result_complete):
  // open, idle, waiting for a reattach.
  std::shared_ptr<Operation> StartAndCut(const std::string& id, SteadyTime started_at, SteadyTime cut_at,
                                         const std::string& session_id = "session-a") {
    auto [operation, created] = registry_.Start(NewOperation(id, true, started_at, session_id));
    EXPECT_TRUE(created);
    registry_.CallEnded(operation, StreamEnd(cut_at));
    return operation;
  }

  RecordingOperationSink sink_;
  OperationRegistry registry_{sink_, TestOptions()};
};
}  // namespace sparktrace::tracing::connect
