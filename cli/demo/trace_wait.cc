#include "cli/demo/trace_wait.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/units.h"
#include "tracing/airflow_task_report.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/open/open_span_store.h"

namespace sparktrace::cli::demo {
namespace {

// Well below the demo's --span-batch-delay, so the wait adds little to the export itself.
constexpr std::chrono::milliseconds kPollInterval{50};

}  // namespace

std::string StringAttribute(const tracing::Span& span, std::string_view key) {
  const auto* text = tracing::AttributeValueOf<std::string>(span.attributes, key);
  return text != nullptr ? *text : "";
}

const tracing::Span* FindChildSpan(std::span<const tracing::Span> spans, const tracing::Span& parent,
                                   std::string_view name) {
  const auto found = std::find_if(spans.begin(), spans.end(), [&](const tracing::Span& span) {
    return span.parent_span_id == parent.span_id && span.name == name;
  });
  return found != spans.end() ? &*found : nullptr;
}

const tracing::Span* FindOperationSpan(std::span<const tracing::Span> spans, std::string_view operation_id) {
  for (const auto& span : spans) {
    if (span.name == kOperationSpanName &&
        StringAttribute(span, tracing::kSparkConnectOperationIdKey) == operation_id) {
      return &span;
    }
  }
  return nullptr;
}

namespace {

// Whether the driver's lifecycle span of the operation span `operation` is stored and closed.
bool HasClosedLifecycle(std::span<const tracing::Span> spans, const tracing::Span& operation) {
  const tracing::Span* lifecycle = FindChildSpan(spans, operation, kLifecycleSpanName);
  return lifecycle != nullptr &&
         std::any_of(lifecycle->events.begin(), lifecycle->events.end(),
                     [](const tracing::SpanEvent& event) { return event.name == "closed"; });
}

// The Airflow task's span `span_id` with a state other than "running" (its final report).
bool HasEndedTaskSpan(std::span<const tracing::Span> spans, const tracing::SpanId& span_id) {
  return std::any_of(spans.begin(), spans.end(), [&span_id](const tracing::Span& span) {
    const auto* state =
        tracing::AttributeValueOf<std::string>(span.attributes, tracing::kAirflowTaskStateKey);
    return span.span_id == span_id && state != nullptr && *state != "running";
  });
}

// Polls the store (opened read-only once the proxy has created it) every kPollInterval until `check`
// answers, the timeout passes or `pause` is stopped. `check` returns the answer, or nullopt after
// setting `problem` to what is still missing; the errors name `awaited` and the last problem.
template <typename T, typename Check>
Result<T> PollStore(const tracing::store::StoreLocation& store_location, std::chrono::milliseconds timeout,
                    const PauseFunction& pause, std::string_view awaited, std::string problem, Check check) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_ptr<tracing::store::SpanStore> store;
  while (true) {
    if (!store) {
      tracing::store::StoreOptions options;
      options.read_only = true;
      // A reader needs the database the proxy creates; until then, try again.
      if (auto opened = tracing::store::OpenSpanStore(store_location, options); opened.ok()) {
        store = std::move(*opened);
      } else {
        problem = opened.error().message;
      }
    }
    if (store) {
      if (std::optional<T> answer = check(*store, problem)) return std::move(*answer);
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds(0)) {
      return Error{ErrorCode::kUnavailable,
                   fmt::format("{} did not reach {} within {}: {}", awaited, store_location.display,
                               FormatDuration(timeout), problem)};
    }
    if (!pause(std::min(left, kPollInterval))) {
      return Error{ErrorCode::kUnavailable, fmt::format("stopped waiting for {}: {}", awaited, problem)};
    }
  }
}

}  // namespace

Result<std::vector<tracing::Span>> WaitForOperationSpans(const tracing::store::StoreLocation& store_location,
                                                         const tracing::TraceId& trace_id,
                                                         std::span<const std::string> operation_ids,
                                                         bool driver_spans,
                                                         const std::optional<tracing::SpanId>& task_span_id,
                                                         std::chrono::milliseconds timeout,
                                                         const PauseFunction& pause) {
  return PollStore<std::vector<tracing::Span>>(
      store_location, timeout, pause, "the trace", "no span of the trace yet",
      [&](tracing::store::SpanStore& store,
          std::string& problem) -> std::optional<std::vector<tracing::Span>> {
        auto found = store.GetTrace(trace_id);
        if (!found.ok()) {
          if (found.error().code != ErrorCode::kNotFound) problem = found.error().message;
          return std::nullopt;
        }
        std::string missing;
        std::string without_driver;
        for (const auto& operation_id : operation_ids) {
          const tracing::Span* operation = FindOperationSpan(*found, operation_id);
          if (operation == nullptr) {
            missing += (missing.empty() ? "" : ", ") + operation_id;
          } else if (driver_spans && !HasClosedLifecycle(*found, *operation)) {
            without_driver += (without_driver.empty() ? "" : ", ") + operation_id;
          }
        }
        const bool task_ended = !task_span_id || HasEndedTaskSpan(*found, *task_span_id);
        if (missing.empty() && without_driver.empty() && task_ended) return std::move(*found);
        problem = std::to_string(found->size()) + " span(s) stored, " +
                  (!missing.empty()          ? "no operation span yet for " + missing
                   : !without_driver.empty() ? "no closed driver lifecycle span yet for " + without_driver
                                             : std::string("the Airflow task's final report not stored yet"));
        return std::nullopt;
      });
}

Result<tracing::store::TaskAttemptRow> WaitForSettledAttempt(
    const tracing::store::StoreLocation& store_location, const tracing::store::TaskAttemptKey& key,
    std::chrono::milliseconds timeout, const PauseFunction& pause) {
  tracing::store::TaskAttemptFilter filter;
  filter.airflow_only = true;
  filter.dag_id = key.dag_id;
  filter.task_id = key.task_id;
  filter.run_id = key.run_id;
  filter.try_number = key.try_number;
  filter.map_index = key.map_index;
  return PollStore<tracing::store::TaskAttemptRow>(
      store_location, timeout, pause, "the attempt's settled cost",
      "the attempt is not in the task index yet",
      [&](tracing::store::SpanStore& store,
          std::string& problem) -> std::optional<tracing::store::TaskAttemptRow> {
        auto page = store.ListTaskAttempts(filter);
        if (!page.ok()) {
          problem = page.error().message;
          return std::nullopt;
        }
        if (page->rows.empty()) return std::nullopt;
        const tracing::store::TaskAttemptRow& row = page->rows.front();
        if (row.settled && row.settled_current && row.state != "running") return row;
        problem = row.state == "running" ? "the attempt still runs" : "the attempt is not settled yet";
        return std::nullopt;
      });
}

}  // namespace sparktrace::cli::demo
