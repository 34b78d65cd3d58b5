#include "traceview/span_lanes.h"

#include <array>
#include <charconv>

#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

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
  const std::string_view id = StringAttribute(span, tracing::kSparkConnectOperationIdKey);
  const std::string_view plan_kind = StringAttribute(span, tracing::kSparkConnectPlanKindKey);
  const std::string_view command = StringAttribute(span, tracing::kSparkConnectCommandKey);
  if (plan_kind == "root") return WithShortId("query", id);
  // write_operation, write_operation_v2, write_stream_operation_start, ...
  if (command.starts_with("write")) return WithShortId("write", id);
  if (!command.empty()) return WithShortId("command " + std::string(command), id);
  return WithShortId(plan_kind == "command" ? "command" : "operation", id);
}

std::string StageLabel(const tracing::Span& span) {
  std::string label = "stage";
  if (const std::optional<std::int64_t> id = IntAttribute(span, tracing::kSparkStageIdKey)) {
    label += " " + std::to_string(*id);
  }
  if (const std::optional<std::int64_t> attempt = IntAttribute(span, tracing::kSparkStageAttemptKey)) {
    label += " (attempt " + std::to_string(*attempt) + ")";
  }
  if (const std::string_view name = StringAttribute(span, tracing::kSparkStageNameKey); !name.empty()) {
    label += ": " + std::string(name);
  }
  return label;
}

std::string PhaseLabel(std::string_view phase) {
  const std::optional<tracing::SparkPhase> known = tracing::SparkPhaseNamed(phase);
  if (known == tracing::SparkPhase::kResourceWait) return "resource wait";
  if (known == tracing::SparkPhase::kIoWrite) return "I/O write";
  return std::string(phase);  // "compute", "idle", or one a later version adds
}

std::string ApplicationLabel(const tracing::Span& span) {
  if (const std::string_view name = StringAttribute(span, tracing::kSparkAppNameKey); !name.empty()) {
    return std::string(name);
  }
  if (const std::string_view id = StringAttribute(span, tracing::kSparkAppIdKey); !id.empty())
    return std::string(id);
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
  if (name == tracing::kAirflowTaskSpanName) return Lane::kTask;
  if (name == tracing::kSparkConnectOperationSpanName) return Lane::kOperation;
  if (name == tracing::kSparkConnectLifecycleSpanName) return Lane::kLifecycle;
  if (name == tracing::kSparkJobSpanName) return Lane::kJob;
  if (name == tracing::kSparkStageSpanName) return Lane::kStage;
  if (name == tracing::kSparkApplicationSpanName) return Lane::kApplication;
  if (name.starts_with(tracing::kSparkPhasePrefix)) return Lane::kPhase;
  if (name.starts_with(tracing::kSparkConnectRpcSpanPrefix)) return Lane::kRpc;
  // Calls to other gRPC services through the proxy are named by their path, without a fixed prefix.
  if (span.kind == tracing::SpanKind::kServer && !StringAttribute(span, tracing::kRpcMethodKey).empty()) {
    return Lane::kRpc;
  }
  return Lane::kOther;
}

std::string_view PhaseNameOf(const tracing::Span& span) {
  const std::string_view name = span.name;
  if (!name.starts_with(tracing::kSparkPhasePrefix)) return {};
  return name.substr(tracing::kSparkPhasePrefix.size());
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
      if (const std::string_view method = StringAttribute(span, tracing::kRpcMethodKey); !method.empty()) {
        return std::string(method);
      }
      const std::size_t slash = span.name.rfind('/');
      return slash == std::string::npos ? span.name : span.name.substr(slash + 1);
    }
    case Lane::kOperation:
      return OperationLabel(span);
    case Lane::kLifecycle:
      return WithShortId("lifecycle", StringAttribute(span, tracing::kSparkConnectOperationIdKey));
    case Lane::kJob: {
      const std::optional<std::int64_t> id = IntAttribute(span, tracing::kSparkJobIdKey);
      return id ? "job " + std::to_string(*id) : "job";
    }
    case Lane::kStage:
      return StageLabel(span);
    case Lane::kPhase:
      return PhaseLabel(PhaseNameOf(span));
    case Lane::kApplication:
      return ApplicationLabel(span);
    case Lane::kOther:
      if (span.name == tracing::kSparkSqlExecutionSpanName) {
        const std::optional<std::int64_t> id = IntAttribute(span, tracing::kSparkSqlExecutionIdKey);
        return id ? "SQL " + std::to_string(*id) : "SQL";
      }
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
