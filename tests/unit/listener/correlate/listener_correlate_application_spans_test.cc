// Applications without Spark Connect (plain spark-submit logs): a trace per application with
// spark.application → spark.job → spark.stage and the phase spans, from a real event log.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/span_builder.h"
#include "listener/correlate/span_ids.h"
#include "listener/events/event_parser.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::listener::correlate {
namespace {

using tracing::Span;

std::optional<std::int64_t> IntAttribute(const Span& span, std::string_view key) {
  for (const tracing::Attribute& attribute : span.attributes) {
    if (attribute.key == key) {
      if (const auto* value = std::get_if<std::int64_t>(&attribute.value)) return *value;
    }
  }
  return std::nullopt;
}

const Span* FindByInt(const std::vector<Span>& spans, std::string_view name, std::string_view key,
                      std::int64_t value) {
  for (const Span& span : spans) {
    if (span.name == name && IntAttribute(span, key) == value) return &span;
  }
  return nullptr;
}

// application_1553914137147_0018: 3 jobs, each with one stage of 2 tasks (figures from the log):
//   stage 2.0 tasks: durations 14191 and 30302 ms; run time 14080 + 29084 = 43164 ms;
//   CPU 13858940111 + 12644117227 ns = 26503 ms; input 2 × 2500050000 bytes.
TEST(ListenerCorrelateApplicationSpans, RealSparkSubmitLog) {
  const std::optional<std::filesystem::path> data_dir = events::test_data::FindDataDir();
  if (!data_dir) GTEST_SKIP() << events::test_data::DataDirMissingMessage();
  std::string why;
  const std::optional<std::string> content =
      events::test_data::ReadLogFile(*data_dir / "spark-events/application_1553914137147_0018", why);
  ASSERT_TRUE(content.has_value()) << why;
  ApplicationModel model;
  events::EventParser parser;
  for (std::string_view line : events::test_data::SplitLines(*content)) {
    Result<events::SparkEvent> event = parser.Parse(line);
    ASSERT_TRUE(event.ok()) << event.error().ToString();
    model.Apply(*event);
  }

  const BuiltSpans built = BuildApplicationSpans(model);
  ASSERT_FALSE(built.spans.empty());
  const Span& root = built.spans.front();
  EXPECT_EQ(root.name, "spark.application");
  EXPECT_EQ(root.trace_id, ApplicationTraceId("application_1553914137147_0018"));
  EXPECT_FALSE(tracing::IsValid(root.parent_span_id));
  EXPECT_EQ(root.start_time_unix_nano, 1554755984286ULL * 1'000'000);
  EXPECT_EQ(root.end_time_unix_nano, 1554756046454ULL * 1'000'000);
  EXPECT_EQ(IntAttribute(root, "spark.phase.resource_wait.ms"), 10310);
  EXPECT_EQ(IntAttribute(root, "spark.phase.compute.ms"), 50647);
  EXPECT_EQ(IntAttribute(root, "spark.phase.idle.ms"), 1211);

  int jobs = 0;
  int stages = 0;
  int phases = 0;
  for (const Span& span : built.spans) {
    EXPECT_EQ(span.trace_id, root.trace_id);
    if (span.name == "spark.job") {
      ++jobs;
      EXPECT_EQ(span.parent_span_id, root.span_id);
    } else if (span.name == "spark.stage") {
      ++stages;
    } else if (span.name.starts_with("spark.phase.")) {
      ++phases;
      EXPECT_EQ(span.parent_span_id, root.span_id);
    }
  }
  EXPECT_EQ(jobs, 3);
  EXPECT_EQ(stages, 3);
  EXPECT_EQ(phases, 6);

  const Span* job2 = FindByInt(built.spans, "spark.job", "spark.job.id", 2);
  const Span* stage2 = FindByInt(built.spans, "spark.stage", "spark.stage.id", 2);
  ASSERT_NE(job2, nullptr);
  ASSERT_NE(stage2, nullptr);
  EXPECT_EQ(stage2->parent_span_id, job2->span_id);
  EXPECT_EQ(IntAttribute(*stage2, "spark.stage.tasks"), 2);
  EXPECT_EQ(IntAttribute(*stage2, "spark.stage.task_duration_ms.p50"), 14191);
  EXPECT_EQ(IntAttribute(*stage2, "spark.stage.task_duration_ms.p95"), 30302);
  EXPECT_EQ(IntAttribute(*stage2, "spark.stage.task_duration_ms.max"), 30302);
  EXPECT_EQ(IntAttribute(*stage2, "spark.stage.executor_run_time_ms"), 43164);
  EXPECT_EQ(IntAttribute(*stage2, "spark.stage.executor_cpu_time_ms"), 26503);
  EXPECT_EQ(IntAttribute(*stage2, "spark.stage.input_bytes"), 5000100000);

  // Built again from the same model: the same ids (what lets a store replace instead of duplicate).
  const BuiltSpans again = BuildApplicationSpans(model);
  ASSERT_EQ(again.spans.size(), built.spans.size());
  for (std::size_t i = 0; i < built.spans.size(); ++i)
    EXPECT_EQ(again.spans[i].span_id, built.spans[i].span_id);
}

TEST(ListenerCorrelateApplicationSpans, AttemptsGetTheirOwnTraceAndPhaseSpansAreCapped) {
  EXPECT_NE(ApplicationTraceId(ApplicationKey("app-1", std::string("1"))),
            ApplicationTraceId(ApplicationKey("app-1", std::string("2"))));
  EXPECT_EQ(ApplicationKey("app-1", std::nullopt), "app-1");

  // Alternating compute and idle: 5 stages give 10 intervals after the start.
  ApplicationModel model;
  std::vector<std::string> log = {test_lines::AppStart("app-cap", 0), test_lines::ExecutorAdded("1", 0)};
  for (int stage = 0; stage < 5; ++stage) {
    log.push_back(test_lines::StageSubmitted(stage, 100 * stage + 10, 1));
    log.push_back(test_lines::StageCompleted(stage, 100 * stage + 10, 100 * stage + 50, 1));
  }
  log.push_back(test_lines::AppEnd(1000));
  test_lines::Feed(model, log);
  const BuiltSpans built = BuildApplicationSpans(model, SpanBuildOptions{.max_phase_spans = 4});
  int phase_spans = 0;
  for (const Span& span : built.spans) phase_spans += span.name.starts_with("spark.phase.") ? 1 : 0;
  EXPECT_EQ(phase_spans, 4);
  EXPECT_EQ(built.dropped_phase_intervals, 11 - 4);  // idle, (compute, idle) × 5
  // Stage attempts that no job lists hang under the application span.
  int stage_spans = 0;
  for (const Span& span : built.spans) {
    if (span.name == "spark.stage") {
      ++stage_spans;
      EXPECT_EQ(span.parent_span_id, built.spans.front().span_id);
    }
  }
  EXPECT_EQ(stage_spans, 5);
}

// A job whose JobEnd never came: "running" while the log grows, "unknown" once the application
// ended; its span ends at the latest event time, then at the application's end.
TEST(ListenerCorrelateApplicationSpans, JobWithoutEnd) {
  ApplicationModel model;
  test_lines::Feed(model, {test_lines::AppStart("app-open", 0), test_lines::ExecutorAdded("1", 0),
                           test_lines::JobStart(0, 10, {0}, {}), test_lines::StageSubmitted(0, 20, 1),
                           test_lines::TaskEnd(0, 1, 20, 70)});
  const auto status_of_job0 = [&model]() -> std::pair<std::string, std::uint64_t> {
    for (const Span& span : BuildApplicationSpans(model).spans) {
      if (span.name != "spark.job") continue;
      for (const tracing::Attribute& attribute : span.attributes) {
        if (attribute.key == "spark.job.status")
          return {std::get<std::string>(attribute.value), span.end_time_unix_nano};
      }
    }
    return {"", 0};
  };
  EXPECT_EQ(status_of_job0(), std::make_pair(std::string("running"), std::uint64_t{70'000'000}));
  test_lines::Feed(model, {test_lines::AppEnd(100)});
  EXPECT_EQ(status_of_job0(), std::make_pair(std::string("unknown"), std::uint64_t{100'000'000}));
}

}  // namespace
}  // namespace sparktrace::listener::correlate
