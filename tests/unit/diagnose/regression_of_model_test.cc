// The runs `sparktrace diagnose --regressions` reads from the listener's model
// (diagnose/regression_of_model.h) equal the runs the trace view reads from the spans the live
// feed builds of the same events (traceview/regression_of_spans.h), and so do the history and the
// regression computed over them: on the real logs of model_and_spans_test_support.h, each in turn
// the current run of a job whose earlier runs are the others. Two logs are known to differ, for
// what the span builder makes of them, not for the adapters (kKnownDifferences).

#include "diagnose/regression_of_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diagnose/regression/history.h"
#include "diagnose/regression/regression.h"
#include "tests/unit/diagnose/model_and_spans_test_support.h"
#include "tests/unit/listener/events/listener_event_test_data.h"
#include "traceview/regression_of_spans.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::diagnose {
namespace {

using regression::RunSummary;

// Logs whose runs the page reads otherwise than `diagnose`, each with why. Each is checked to still
// differ, so that the list shrinks when the cause goes away.
constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kKnownDifferences = {{
    {"spark-events-problems/tasks_executors_fail_compressed_eventlog.zstd",
     "264 phase intervals, over the span builder's 256 (SpanBuildOptions::max_phase_spans): the page "
     "counts the 8 left out as driver idle; and a job and its SQL execution end 40 ms after "
     "ApplicationEnd, so the page's wall is longer"},
    {"spark-events-thirdparty/sparkscope/app-20231025121456-0004-eventLog-finished-exec-removed",
     "a stage's times are 65 days after the application's end: the page's wall reaches them"},
}};

bool IsKnownDifference(std::string_view log) {
  return std::any_of(kKnownDifferences.begin(), kKnownDifferences.end(),
                     [log](const auto& known) { return known.first == log; });
}

bool SameRun(const RunSummary& from_model, const RunSummary& from_spans) {
  return from_model.start_ms == from_spans.start_ms && from_model.wall_ms == from_spans.wall_ms &&
         from_model.phases == from_spans.phases;
}

// One log as a run, read both ways.
struct RunBothWays {
  std::string log;
  RunSummary from_model;
  RunSummary from_spans;
};

// Equal up to the order the two sides add their terms in.
void ExpectSameMs(double from_model, double from_spans, const std::string& what) {
  EXPECT_NEAR(from_model, from_spans, 1e-9 * std::max(1.0, std::fabs(from_spans))) << what;
}

void ExpectSameRun(const RunSummary& from_model, const RunSummary& from_spans, const std::string& what) {
  ExpectSameMs(from_model.start_ms, from_spans.start_ms, what + " start");
  ExpectSameMs(from_model.wall_ms, from_spans.wall_ms, what + " wall");
  for (std::size_t phase = 0; phase < tracing::kViewPhaseCount; ++phase) {
    ExpectSameMs(from_model.phases[phase], from_spans.phases[phase],
                 what + " " + std::string(tracing::ViewPhaseName(static_cast<tracing::ViewPhase>(phase))));
  }
}

// The history of `runs` with run `current` the one viewed, every run named as the log it is of.
regression::History HistoryOf(const std::vector<RunBothWays>& runs, std::size_t current, bool model_side) {
  std::vector<RunSummary> summaries;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    RunSummary run = model_side ? runs[i].from_model : runs[i].from_spans;
    run.run_id = runs[i].log;
    run.state = "success";
    run.current = i == current;
    summaries.push_back(std::move(run));
  }
  return regression::ComputeHistory(std::move(summaries));
}

TEST(RegressionOfModel, RealLogsRunAndRegressAsTheirSpans) {
  const std::optional<std::filesystem::path> data_dir = listener::events::test_data::FindDataDir();
  if (!data_dir) GTEST_SKIP() << listener::events::test_data::DataDirMissingMessage();
  std::vector<RunBothWays> runs;
  for (const std::string_view log : test_support::kRealLogs) {
    const std::optional<listener::correlate::ApplicationModel> model =
        test_support::RealLogModel(*data_dir, log);
    ASSERT_TRUE(model) << log;
    std::optional<RunSummary> from_model = RunOfApplication(*model, false);
    if (!from_model) continue;  // no window: neither side has a run
    RunBothWays run{std::string(log), std::move(*from_model),
                    traceview::RunOfSpans(test_support::FeedSpansOf(*model))};
    if (IsKnownDifference(log)) {
      EXPECT_FALSE(SameRun(run.from_model, run.from_spans))
          << log << " no longer differs: take it off the list";
      continue;
    }
    ExpectSameRun(run.from_model, run.from_spans, run.log);
    runs.push_back(std::move(run));
  }
  ASSERT_GE(runs.size(), 7u);

  int regressions = 0;
  for (std::size_t current = 0; current < runs.size(); ++current) {
    const regression::History model_history = HistoryOf(runs, current, true);
    const regression::History spans_history = HistoryOf(runs, current, false);
    ASSERT_EQ(model_history.baseline.has_value(), spans_history.baseline.has_value()) << runs[current].log;
    const auto from_model = regression::DetectRegression(model_history, true);
    const auto from_spans = regression::DetectRegression(spans_history, true);
    ASSERT_EQ(from_model.has_value(), from_spans.has_value()) << runs[current].log;
    if (!from_model) continue;
    ++regressions;
    EXPECT_EQ(regression::RegressionTitle(*from_model), regression::RegressionTitle(*from_spans));
    EXPECT_EQ(regression::RegressionEvidence(*from_model), regression::RegressionEvidence(*from_spans));
    EXPECT_EQ(from_model->critical, from_spans->critical);
    ExpectSameMs(from_model->delta_ms, from_spans->delta_ms, runs[current].log + " delta");
  }
  EXPECT_GE(regressions, 1);  // the comparison is over regressions found, not only over their absence
}

}  // namespace
}  // namespace sparktrace::diagnose
