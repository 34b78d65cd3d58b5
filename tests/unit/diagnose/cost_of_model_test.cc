// The cost `sparktrace diagnose` reads from the listener's model (diagnose/cost_of_model.h) equals
// the cost the trace view reads from the spans the live feed builds of the same events
// (traceview/cost_of_spans.h): on real logs of every kind the data holds (YARN, Kubernetes, local
// mode, dynamic allocation, executors lost, several attempts, a running log:
// model_and_spans_test_support.h) and on a shared Spark Connect server whose operations overlap.

#include "diagnose/cost_of_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/cost/cost_model.h"
#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"
#include "listener/correlate/span_builder.h"
#include "tests/unit/diagnose/model_and_spans_test_support.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"
#include "tests/unit/listener/correlate/shared_server_test_log.h"
#include "tests/unit/listener/events/listener_event_test_data.h"
#include "traceview/cost_of_spans.h"

namespace sparktrace::diagnose {
namespace {

using cost::AttemptCost;
using listener::correlate::ApplicationModel;
namespace lines = listener::correlate::test_lines;

// What the page computes: the spans the feed builds, read by the trace view's adapter.
std::optional<AttemptCost> ApplicationCostOfSpans(const ApplicationModel& model) {
  const auto phases = listener::correlate::ApplicationPhases(model);
  if (!phases) return std::nullopt;
  const std::vector<tracing::Span> spans = test_support::FeedSpansOf(model);
  const auto start_ms = static_cast<double>(phases->window.start_ms);
  const auto end_ms = static_cast<double>(phases->window.end_ms);
  cost::CostInputs inputs = traceview::CostInputsOfSpans(spans, start_ms, end_ms);
  inputs.windows = {cost::CostWindow{start_ms, end_ms, 1.0}};  // the whole application is charged
  inputs.shared = false;
  inputs.other_operations = 0;
  return cost::ComputeCost(inputs, {.core_hour = 0.05, .gib_hour = 0.005});
}

std::optional<AttemptCost> OperationCostOfSpans(const ApplicationModel& model,
                                                std::string_view operation_id) {
  const listener::correlate::ConnectOperationRecord* operation = model.FindOperation(operation_id);
  const auto phases = listener::correlate::OperationPhases(model, *operation);
  if (!phases) return std::nullopt;
  const std::vector<tracing::Span> spans =
      listener::correlate::BuildOperationSpans(model, operation_id, test_support::AnyParent()).spans;
  return cost::ComputeCost(traceview::CostInputsOfSpans(spans, static_cast<double>(phases->window.start_ms),
                                                        static_cast<double>(phases->window.end_ms)),
                           {.core_hour = 0.05, .gib_hour = 0.005});
}

std::optional<AttemptCost> CostOf(const std::optional<cost::CostInputs>& inputs) {
  if (!inputs) return std::nullopt;
  return cost::ComputeCost(*inputs, {.core_hour = 0.05, .gib_hour = 0.005});
}

// Equal up to the order the two sides add their terms in.
void ExpectSameFigure(double from_model, double from_spans, const std::string& what) {
  EXPECT_NEAR(from_model, from_spans, 1e-9 * std::max(1.0, std::fabs(from_spans))) << what;
}

void ExpectSameCost(const std::optional<AttemptCost>& from_model,
                    const std::optional<AttemptCost>& from_spans, const std::string& what) {
  ASSERT_EQ(from_model.has_value(), from_spans.has_value()) << what;
  if (!from_model) return;
  EXPECT_EQ(from_model->known, from_spans->known) << what;
  ExpectSameFigure(from_model->core_seconds, from_spans->core_seconds, what + " core_seconds");
  ExpectSameFigure(from_model->executor_core_seconds, from_spans->executor_core_seconds, what + " executor");
  ExpectSameFigure(from_model->driver_core_seconds, from_spans->driver_core_seconds, what + " driver");
  ASSERT_EQ(from_model->gib_seconds.has_value(), from_spans->gib_seconds.has_value()) << what;
  if (from_model->gib_seconds)
    ExpectSameFigure(*from_model->gib_seconds, *from_spans->gib_seconds, what + " GiB");
  ExpectSameFigure(from_model->used_core_seconds, from_spans->used_core_seconds, what + " used");
  ASSERT_EQ(from_model->idle_fraction.has_value(), from_spans->idle_fraction.has_value()) << what;
  if (from_model->idle_fraction)
    ExpectSameFigure(*from_model->idle_fraction, *from_spans->idle_fraction, what + " idle");
  EXPECT_EQ(from_model->shared, from_spans->shared) << what;
  EXPECT_EQ(from_model->other_operations, from_spans->other_operations) << what;
  ExpectSameFigure(from_model->share, from_spans->share, what + " share");
  ASSERT_EQ(from_model->money.has_value(), from_spans->money.has_value()) << what;
  if (from_model->money)
    ExpectSameFigure(from_model->money->total, from_spans->money->total, what + " money");
}

void ExpectModelCostsAsThePage(const ApplicationModel& model, const std::string& what) {
  ExpectSameCost(CostOf(ApplicationCostInputs(model)), ApplicationCostOfSpans(model), what + " application");
  for (const auto& [id, operation] : model.operations())
    ExpectSameCost(CostOf(OperationCostInputs(model, id)), OperationCostOfSpans(model, id),
                   what + " operation " + id);
}

TEST(CostOfModel, RealLogsCostAsTheirSpans) {
  const std::optional<std::filesystem::path> data_dir = listener::events::test_data::FindDataDir();
  if (!data_dir) GTEST_SKIP() << listener::events::test_data::DataDirMissingMessage();
  int known = 0;
  for (const std::string_view log : test_support::kRealLogs) {
    const std::optional<ApplicationModel> model = test_support::RealLogModel(*data_dir, log);
    ASSERT_TRUE(model) << log;
    ExpectModelCostsAsThePage(*model, std::string(log));
    const std::optional<AttemptCost> cost = CostOf(ApplicationCostInputs(*model));
    if (cost && cost->known && cost->core_seconds > 0) ++known;
  }
  EXPECT_GE(known, 8);  // the comparison is over figures, not over unknowns
}

// Two operations of one server overlap (A 1000..9000, B 5000..13000, B's stage 6000..12000), an
// executor comes and goes while both run, a third operation never gets an executor's task, and a
// fourth still runs when the log ends.
TEST(CostOfModel, ASharedConnectServerCostsAsItsSpans) {
  const std::vector<std::string> log =
      lines::SharedServerLog({.more_settings = {{"spark.driver.cores", "2"}}, .more_operations = true});
  ApplicationModel model;
  lines::Feed(model, log);
  ASSERT_EQ(model.operations().size(), 4u);
  ExpectModelCostsAsThePage(model, "shared server");
  // B's stage ran while A was open: A is charged its share only (the comparison above covers the
  // shared path, not only the dedicated one).
  const std::optional<AttemptCost> a = CostOf(OperationCostInputs(model, lines::kOperationA));
  ASSERT_TRUE(a && a->known);
  EXPECT_TRUE(a->shared);
  EXPECT_GT(a->share, 0.0);
  EXPECT_LT(a->share, 1.0);
}

}  // namespace
}  // namespace sparktrace::diagnose
