#include "traceview/span_lanes.h"

#include <array>
#include <charconv>

namespace sparktrace::traceview {
namespace {

constexpr std::string_view kRpcPrefix = "spark.connect.SparkConnectService/";
constexpr std::string_view kPhasePrefix = "spark.phase.";
constexpr std::size_t kShortIdLength = 8;

std::string_view StringAttribute(const tracing::Span& span, std::string_view key) {
  const std::string* value = tracing::AttributeValueOf<std::string>(span.attributes, key);
  return value == nullptr ? std::string_view() : std::string_view(*value);
}

std::string ShortId(std::string_view id) { return std::string(id.substr(0, kShortIdLength)); }

// "<what> <short id>", or "<what>" alone when the id is unknown.
std::string WithShortId(std::string what, std::string_view id) {
  if (!id.empty()) what += " " + ShortId(id);
  return what;
}

std::string OperationLabel(const tracing::Span& span) {
  const std::string_view id = StringAttribute(span, "spark.connect.operation_id");
  const std::string_view plan_kind = StringAttribute(span, "spark.connect.plan_kind");
  const std::string_view command = StringAttribute(span, "spark.connect.command");
  if (plan_kind == "root") return WithShortId("query", id);
  // write_operation, write_operation_v2, write_stream_operation_start, ...
  if (command.starts_with("write")) return WithShortId("write", id);
  if (!command.empty()) return WithShortId("command " + std::string(command), id);
  return WithShortId(plan_kind == "command" ? "command" : "operation", id);
}

std::string StageLabel(const tracing::Span& span) {
  std::string label = "stage";
  if (const std::optional<std::int64_t> id = IntAttribute(span, "spark.stage.id")) {
    label += " " + std::to_string(*id);
  }
  if (const std::optional<std::int64_t> attempt = IntAttribute(span, "spark.stage.attempt")) {
    label += " (attempt " + std::to_string(*attempt) + ")";
  }
  if (const std::string_view name = StringAttribute(span, "spark.stage.name"); !name.empty()) {
    label += ": " + std::string(name);
  }
  return label;
}

std::string PhaseLabel(std::string_view phase) {
  if (phase == "resource_wait") return "resource wait";
  if (phase == "io_write") return "I/O write";
  return std::string(phase);  // "compute", "idle", or one a later version adds
}

std::string ApplicationLabel(const tracing::Span& span) {
  if (const std::string_view name = StringAttribute(span, "spark.app.name"); !name.empty()) {
    return std::string(name);
  }
  if (const std::string_view id = StringAttribute(span, "spark.app.id"); !id.empty()) return std::string(id);
  return "application";
}

}  // namespace

std::string_view LaneName(Lane lane) {
  static constexpr std::array<std::string_view, kLaneCount> kNames = {
      "task", "rpc", "operation", "lifecycle", "job", "stage", "phase", "application", "other"};
  const auto index = static_cast<std::size_t>(lane);
  return index < kNames.size() ? kNames[index] : "other";
}

Lane LaneOf(const tracing::Span& span) {
  const std::string_view name = span.name;
  if (name == "airflow.task") return Lane::kTask;
  if (name == "spark_connect.operation") return Lane::kOperation;
  if (name == "spark.connect.operation.lifecycle") return Lane::kLifecycle;
  if (name == "spark.job") return Lane::kJob;
  if (name == "spark.stage") return Lane::kStage;
  if (name == "spark.application") return Lane::kApplication;
  if (name.starts_with(kPhasePrefix)) return Lane::kPhase;
  if (name.starts_with(kRpcPrefix)) return Lane::kRpc;
  // Calls to other gRPC services through the proxy are named by their path, without a fixed prefix.
  if (span.kind == tracing::SpanKind::kServer && !StringAttribute(span, "rpc.method").empty()) {
    return Lane::kRpc;
  }
  return Lane::kOther;
}

std::string_view PhaseNameOf(const tracing::Span& span) {
  const std::string_view name = span.name;
  if (!name.starts_with(kPhasePrefix)) return {};
  return name.substr(kPhasePrefix.size());
}

std::optional<std::int64_t> IntAttribute(const tracing::Span& span, std::string_view key) {
  if (const std::int64_t* value = tracing::AttributeValueOf<std::int64_t>(span.attributes, key)) {
    return *value;
  }
  const std::string_view text = StringAttribute(span, key);
  std::int64_t parsed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return parsed;
}

std::string SpanLabel(const tracing::Span& span) {
  switch (LaneOf(span)) {
    case Lane::kTask:
      return "airflow task";
    case Lane::kRpc: {
      if (const std::string_view method = StringAttribute(span, "rpc.method"); !method.empty()) {
        return std::string(method);
      }
      const std::size_t slash = span.name.rfind('/');
      return slash == std::string::npos ? span.name : span.name.substr(slash + 1);
    }
    case Lane::kOperation:
      return OperationLabel(span);
    case Lane::kLifecycle:
      return WithShortId("lifecycle", StringAttribute(span, "spark.connect.operation_id"));
    case Lane::kJob: {
      const std::optional<std::int64_t> id = IntAttribute(span, "spark.job.id");
      return id ? "job " + std::to_string(*id) : "job";
    }
    case Lane::kStage:
      return StageLabel(span);
    case Lane::kPhase:
      return PhaseLabel(PhaseNameOf(span));
    case Lane::kApplication:
      return ApplicationLabel(span);
    case Lane::kOther:
      break;
  }
  return span.name;
}

std::string_view StatusName(tracing::StatusCode code) {
  switch (code) {
    case tracing::StatusCode::kOk:
      return "ok";
    case tracing::StatusCode::kError:
      return "error";
    case tracing::StatusCode::kUnset:
      break;
  }
  return "unset";
}

}  // namespace sparktrace::traceview
