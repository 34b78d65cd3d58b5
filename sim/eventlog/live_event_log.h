#pragma once
// LiveEventLog: the event log of `sparktrace sim --event-log-dir`, written as things happen. The
// application starts when the log is created (LogStart … ApplicationStart at once; the first
// executors after the scenario's wait × time scale); each ExecutePlan the simulator serves runs
// as a planned operation whose events are written when their time comes, with real wall-clock
// timestamps: durations are the generator's virtual durations × time_scale (0.01: a 100 s stage
// takes 1 s). Finish() writes ApplicationEnd and gives the log its final name.
//
// Threads: every method is thread-safe. Run() blocks its caller (an RPC handler thread) while the
// operation's events are due; a background thread writes the first executors' arrival. One mutex
// serialises the generator and the writer; nobody sleeps holding it.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/result.h"
#include "sim/eventlog/event_log_generator.h"
#include "sim/eventlog/event_log_writer.h"

namespace sparktrace::sim::eventlog {

struct LiveEventLogOptions {
  ApplicationIdentity app;  // start_ms is replaced by the time of Start()
  Scenario scenario;
  WriterOptions writer;     // app_id is taken from `app`
  double time_scale = 1.0;  // > 0
};

class LiveEventLog {
 public:
  static Result<std::unique_ptr<LiveEventLog>> Start(LiveEventLogOptions options);

  LiveEventLog(const LiveEventLog&) = delete;
  LiveEventLog& operator=(const LiveEventLog&) = delete;
  ~LiveEventLog();  // Finish()

  // One operation's progress, between Run() and Close().
  struct Operation {
    OperationPlan plan;
    std::size_t next_event = 0;
    bool failed = false;
    std::string error_message;  // when failed: what Spark reported
  };

  // Plans `spec` to start now and writes its events as they fall due, up to its Finished or
  // Failed event; returns then (or at once after Interrupt(), leaving the rest unwritten).
  std::unique_ptr<Operation> Run(const OperationSpec& spec);
  // Writes the operation's Closed event, dated now (the client's stream is over).
  void Close(Operation& operation);

  // Makes blocked Run() calls return; for shutdown. Idempotent.
  void Interrupt();
  // Interrupt(), then ApplicationEnd, and the final rename. Idempotent.
  void Finish();

  const std::string& path() const { return final_path_; }
  const ScenarioKnobs& knobs() const { return generator_.knobs(); }

 private:
  struct StartTag {
    explicit StartTag() = default;
  };

 public:
  LiveEventLog(const LiveEventLogOptions& options, std::unique_ptr<EventLogWriter> writer, StartTag);

 private:
  using Clock = std::chrono::system_clock;
  static EpochMillis NowMs();
  // Waits until wall-clock `due_ms` or an interrupt; false when interrupted.
  bool WaitUntil(EpochMillis due_ms);
  void WriteLocked(const std::vector<LogLine>& lines);
  void WriteInitialExecutors();

  std::mutex mu_;
  std::condition_variable interrupted_cv_;
  bool interrupted_ = false;                // guarded by mu_
  bool finished_ = false;                   // guarded by mu_
  EventLogGenerator generator_;             // guarded by mu_
  std::unique_ptr<EventLogWriter> writer_;  // guarded by mu_
  std::string final_path_;
  std::thread executors_thread_;
};

}  // namespace sparktrace::sim::eventlog
