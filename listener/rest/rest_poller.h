#pragma once
// RestPoller: the `--spark-ui URL` feed. Each Poll() asks the driver's REST API (or a History
// Server's) for its applications and, for each application still running, its jobs, stages and
// executors, and returns the SparkEvents for what changed since the previous Poll()
// (see rest_event_differ.h for which change gives which event). For when event logs are not shared.
//
// Requests per Poll(): 1 + 3 per tracked application that has not ended (jobs, then stages, then
// allexecutors; jobs before stages so a stage never arrives before its job). A failed request
// (unreachable, timeout, non-200, oversized, not JSON) is counted by kind, reported in the result
// with a message naming the URL, and only suspends what that list would have said until a later
// poll: nothing is emitted twice or lost because of it.
//
// What the REST API cannot tell, compared with an event log (documented limits):
//   * no TaskStart/TaskEnd: the stage list has per-stage sums only (RestEvent::stage_task_metrics_sum),
//     not per-task durations, executors, retries or reasons;
//   * no SQL executions (their /sql endpoint is not polled), no spark.sql.execution.id on jobs;
//   * no Spark Connect operation or session events; jobs carry their jobTags (Spark 3.5+), which
//     hold the Connect operation tag, so jobs still join to operations;
//   * JobEnd.failure_message is taken from the job's failed stage; ApplicationEnd has no exit code;
//     ExecutorAdded has no request time;
//   * http only, no redirects followed (a YARN web-proxy URL redirects: give the driver's own UI);
//   * events come at poll granularity, and short jobs between polls are seen already finished
//     (JobStart and JobEnd in the same poll, times from Spark, not from the poll);
//   * entries Spark no longer retains (spark.ui.retainedJobs/Stages) before a poll saw them are lost.
//
// Threading: not thread-safe; Poll() and counters() from one thread (the caller drives; no hidden
// thread). Poll() blocks up to about (1 + 3 * applications) * request_timeout.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "listener/rest/rest_event.h"

namespace sparktrace::listener::rest {

struct RestPollerOptions {
  std::string spark_ui_url;  // "http://driver:4040" (see spark_ui_endpoint.h)
  std::chrono::milliseconds request_timeout{5000};
  std::size_t max_response_bytes = 32u << 20;
  // Only this application; empty: every listed one, in the server's order, up to max_applications
  // (a live driver lists exactly one; a History Server lists many). Each attempt of an application
  // counts as one.
  std::string application_id;
  std::size_t max_applications = 8;
};

// Monotonic counts since Create(), except the gauge marked.
struct RestFeedCounters {
  std::uint64_t polls = 0;
  std::uint64_t requests = 0;
  std::uint64_t unreachable = 0;  // no connection / closed early / invalid answer
  std::uint64_t timed_out = 0;
  std::uint64_t http_errors = 0;           // answered with a status other than 200
  std::uint64_t too_large = 0;             // body over max_response_bytes
  std::uint64_t bad_json = 0;              // 200 but not the JSON expected
  std::uint64_t events = 0;                // RestEvents returned
  std::uint64_t applications_skipped = 0;  // listed beyond max_applications, per poll
  std::uint64_t jobs_lost = 0;             // dropped out of Spark's list before they were seen to end
  std::uint64_t applications_tracked = 0;  // gauge

  std::uint64_t errors() const { return unreachable + timed_out + http_errors + too_large + bad_json; }
};

struct RestPollResult {
  std::vector<RestEvent> events;
  std::vector<Error> errors;  // one per failed request, in request order
};

class RestPoller {
 public:
  // Fails on an invalid URL or option; does not contact the server.
  static Result<std::unique_ptr<RestPoller>> Create(RestPollerOptions options);

  struct Impl;
  explicit RestPoller(std::unique_ptr<Impl> impl);  // use Create()
  ~RestPoller();
  RestPoller(const RestPoller&) = delete;
  RestPoller& operator=(const RestPoller&) = delete;

  RestPollResult Poll();

  RestFeedCounters counters() const;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sparktrace::listener::rest
