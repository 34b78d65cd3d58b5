#pragma once
// A shared Spark Connect server's log, for the tests of what one operation of a shared server is
// charged: the facts the span builder puts on lifecycle spans (listener_correlate_resource_facts_
// test.cc) and the cost `sparktrace diagnose` computes from them against the page's
// (tests/unit/diagnose/cost_of_model_test.cc).
//
// Two operations of one session overlap: A runs 1000..9000 with a stage of 4 s of task time
// (2000..4000, two tasks), B runs 5000..13000 with a stage (6000..12000) of 6 s; executors 1 (from 0)
// and 2 (added at 3000, removed at 7000, so while both run), 4 GiB each, on Kubernetes.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/diagnose/diagnose_test_lines.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"

namespace sparktrace::listener::correlate::test_lines {

inline constexpr std::string_view kOperationC = "5c1d3e2f-7a8b-4c9d-8e0f-1a2b3c4d5e70";
inline constexpr std::string_view kOperationD = "6d2e4f30-8b9c-4dae-9f10-2b3c4d5e6f81";

struct SharedServerLogOptions {
  // Spark properties of the Environment beside the executors' memory and the master.
  std::map<std::string, std::string> more_settings;
  // Two more operations, of another user: C (5500..7500) never gets an executor's task; D starts
  // at 13500 and still runs when the log ends (a stage of two tasks, one ended at 15000).
  bool more_operations = false;
};

inline std::vector<std::string> SharedServerLog(const SharedServerLogOptions& options = {}) {
  const std::string tag_a = OperationTag("alice", kSessionA, kOperationA);
  const std::string tag_b = OperationTag("alice", kSessionA, kOperationB);
  const std::string tag_c = OperationTag("bob", kSessionA, kOperationC);
  const std::string tag_d = OperationTag("bob", kSessionA, kOperationD);
  std::map<std::string, std::string> settings = options.more_settings;
  settings.insert({{"spark.executor.memory", "4g"}, {"spark.master", "k8s://x"}});
  std::vector<std::string> log = {
      AppStart("app-1", 0),
      diagnose::test_lines::EnvironmentLine(settings),
      ExecutorAdded("1", 0),
      ConnectOperation("Started", tag_a, kOperationA, 1000, kSessionA, "alice"),
      ExecutorAdded("2", 3000),
      JobStart(0, 2000, {0}, {tag_a}),
      StageSubmitted(0, 2000, 2),
      TaskEnd(0, 1, 2000, 4000),
      TaskEnd(0, 2, 2000, 4000),
      StageCompleted(0, 2000, 4000, 2),
      JobEnd(0, 4000),
      ConnectOperation("Started", tag_b, kOperationB, 5000, kSessionA, "alice"),
  };
  if (options.more_operations)
    log.push_back(ConnectOperation("Started", tag_c, kOperationC, 5500, kSessionA, "bob"));
  log.insert(log.end(),
             {JobStart(1, 6000, {1}, {tag_b}), StageSubmitted(1, 6000, 1), ExecutorRemoved("2", 7000)});
  if (options.more_operations) log.push_back(ConnectOperation("Finished", tag_c, kOperationC, 7500));
  log.insert(log.end(), {
                            ConnectOperation("Finished", tag_a, kOperationA, 8000),
                            ConnectOperation("Closed", tag_a, kOperationA, 9000),
                            TaskEnd(1, 3, 6000, 12000),
                            StageCompleted(1, 6000, 12000, 1),
                            JobEnd(1, 12000),
                            ConnectOperation("Finished", tag_b, kOperationB, 12500),
                            ConnectOperation("Closed", tag_b, kOperationB, 13000),
                        });
  if (options.more_operations) {
    log.insert(log.end(), {
                              ConnectOperation("Started", tag_d, kOperationD, 13500, kSessionA, "bob"),
                              JobStart(2, 14000, {2}, {tag_d}),
                              StageSubmitted(2, 14000, 2),
                              TaskEnd(2, 4, 14000, 15000),
                          });
  }
  return log;
}

}  // namespace sparktrace::listener::correlate::test_lines
