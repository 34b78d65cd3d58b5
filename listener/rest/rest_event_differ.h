#pragma once
// RestEventDiffer: what one application looked like at the previous poll, and the SparkEvents that
// say what changed since. Each change yields its event exactly once across polls:
//
//   ApplicationStart   the application is first seen
//   ExecutorAdded      an executor is first seen (the driver only when it has cores, i.e. local
//                      mode: the event log has no ExecutorAdded for a cluster-mode driver either)
//   JobStart           a job is first seen (whatever its status: a short job may finish between polls)
//   StageSubmitted     a stage attempt is first seen ACTIVE, COMPLETE or FAILED (PENDING and SKIPPED
//                      stages were never submitted; the listener bus has no events for them either)
//   StageCompleted     a stage attempt is first seen COMPLETE or FAILED, with the task-metric sums
//   JobEnd             a job is first seen SUCCEEDED or FAILED
//   ExecutorRemoved    an executor is first seen inactive
//   ApplicationEnd     the application's newest attempt is first seen completed
//
// Within one Observe() the events come in that order, which is the listener bus's causal order.
// The poller fetches jobs before stages, so a stage whose job is not known yet (it started between
// the two requests) waits for the next poll rather than arriving before its JobStart; a JobEnd waits
// for a poll whose stage list came through, so it follows its stages' StageCompleted; the
// ApplicationEnd waits for a poll where every list came through.
//
// Memory is bounded by what Spark retains (spark.ui.retainedJobs/Stages, default 1000): entries
// that drop out of a list are forgotten, since Spark will not list them again. A job that drops out
// before it was seen to end is counted in jobs_lost (its JobEnd can never be known).
//
// Not thread-safe; the poller's thread only.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "listener/rest/rest_event.h"
#include "listener/rest/rest_model.h"

namespace sparktrace::listener::rest {

// One poll's view of an application; nullopt for a list whose request failed this time.
struct RestApplicationSnapshot {
  RestApplication application;
  std::optional<std::vector<RestJob>> jobs;
  std::optional<std::vector<RestStage>> stages;
  std::optional<std::vector<RestExecutor>> executors;
};

class RestEventDiffer {
 public:
  // Appends the events for what changed since the previous Observe() to `out`.
  void Observe(const RestApplicationSnapshot& snapshot, std::vector<RestEvent>& out);

  // True once ApplicationEnd was emitted: the application will not change any more.
  bool ended() const { return ended_; }
  std::uint64_t jobs_lost() const { return jobs_lost_; }

 private:
  struct JobSeen {
    bool ended = false;
    std::vector<std::int32_t> stage_ids;
  };
  using StageKey = std::pair<std::int32_t, std::int32_t>;  // stage id, attempt id

  void ObserveJobStarts(const std::vector<RestJob>& jobs, std::vector<events::SparkEvent>& events);
  void ObserveStages(const std::vector<RestStage>& stages, const RestApplicationSnapshot& snapshot,
                     std::vector<RestEvent>& out);
  void ObserveJobEnds(const std::vector<RestJob>& jobs, const std::vector<RestStage>& stages,
                      std::vector<events::SparkEvent>& events);
  void ForgetJobsNotIn(const std::vector<RestJob>& jobs);

  bool started_ = false;
  bool ended_ = false;
  std::map<std::int32_t, JobSeen> jobs_;
  std::map<StageKey, bool> stages_;        // value: completed was emitted
  std::map<std::string, bool> executors_;  // value: removed was emitted
  std::uint64_t jobs_lost_ = 0;
};

}  // namespace sparktrace::listener::rest
