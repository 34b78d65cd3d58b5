#include "cli/traces_command.h"

#include <array>
#include <charconv>
#include <limits>

#include "cli/command_failure.h"
#include "cli/trace_tree.h"
#include "common/flags.h"
#include "tracing/store/open/open_span_store.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kTracesUsage =
    "Usage: sparktrace traces list [--dag ID] [--task ID] [--run ID] [--try N] [--limit N] [--json]\n"
    "       sparktrace traces show TRACE_ID [--json]\n"
    "       sparktrace traces show --operation OPERATION_ID [--json]\n"
    "\n"
    "Reads the traces the proxy stored (--store). `list` shows the newest Airflow task attempts, one\n"
    "row each even when attempts share a trace (and traces without Airflow identity), optionally of one\n"
    "DAG / task / run / try; `show` prints one trace as a tree with durations.\n"
    "\n";

const std::array<FlagSpec, 9> kTracesSpecs = {{
    {"store", "PATH|URL", "sparktrace.db",
     "the trace store the proxy writes (a SQLite file or a postgresql:// URL)"},
    {"dag", "ID", "", "list: only attempts of this Airflow DAG id"},
    {"task", "ID", "", "list: only attempts of this Airflow task id"},
    {"run", "ID", "", "list: only attempts of this Airflow run id"},
    {"try", "N", "", "list: only this Airflow try number"},
    {"limit", "N", "50", "list: at most this many attempts, newest first (0 = all)"},
    {"operation", "ID", "", "show: the trace of this Spark Connect operation id"},
    {"json", "", "", "print JSON instead of text"},
    {"help", "", "", "show this help"},
}};

Result<std::unique_ptr<tracing::store::SpanStore>> OpenStore(const ParsedFlags& flags) {
  auto location = tracing::store::ParseStoreLocation(flags.Get("store"));
  if (!location.ok()) return FlagError("store", location.error());
  tracing::store::StoreOptions options;
  options.read_only = true;
  return tracing::store::OpenSpanStore(*location, options);
}

Result<std::int64_t> NumberFlag(const ParsedFlags& flags, const std::string& name) {
  const std::string& text = flags.Get(name);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return InvalidArgument("--" + name + ": '" + text + "' is not a number");
  }
  return value;
}

AttemptListing ListingOf(const tracing::store::TaskAttemptRow& row) {
  return AttemptListing{
      row.airflow,        row.name,          row.key.dag_id, row.key.task_id, row.key.run_id,
      row.key.try_number, row.key.map_index, row.state,      row.trace_ids,   row.start_unix_nano,
      row.end_unix_nano,  row.span_count,    row.error_count};
}

// One row per task attempt, by the task index's rule (tracing/store/task_attempts.h), so that
// attempts sharing a trace (Airflow 2.10's per-run trace ids, the 3.x context carrier) are each
// listed and found by their own filters.
int List(const ParsedFlags& flags, std::ostream& out, std::ostream& err) {
  tracing::store::TaskAttemptFilter filter;
  if (flags.IsSet("dag")) filter.dag_id = flags.Get("dag");
  if (flags.IsSet("task")) filter.task_id = flags.Get("task");
  if (flags.IsSet("run")) filter.run_id = flags.Get("run");
  if (flags.IsSet("try")) {
    auto try_number = NumberFlag(flags, "try");
    if (!try_number.ok()) return FailCommand(err, "traces", 2, try_number.error().message);
    filter.try_number = *try_number;
  }
  filter.airflow_only = filter.dag_id || filter.task_id || filter.run_id || filter.try_number;
  auto limit = NumberFlag(flags, "limit");
  if (!limit.ok()) return FailCommand(err, "traces", 2, limit.error().message);
  filter.limit = *limit == 0 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::size_t>(*limit);
  auto store = OpenStore(flags);
  if (!store.ok()) return FailCommand(err, "traces", 1, store.error().message);
  auto page = (*store)->ListTaskAttempts(filter);
  if (!page.ok()) return FailCommand(err, "traces", 1, page.error().message);
  std::vector<AttemptListing> listing;
  listing.reserve(page->rows.size());
  for (const auto& row : page->rows) listing.push_back(ListingOf(row));
  out << (flags.GetBool("json") ? RenderAttemptListJson(listing)
                                : RenderAttemptListText(listing));
  return 0;
}

int Show(const ParsedFlags& flags, std::ostream& out, std::ostream& err) {
  const bool by_operation = flags.IsSet("operation");
  if (by_operation == !flags.positional().empty() || flags.positional().size() > 1) {
    return FailCommand(err, "traces", 2, "show takes one TRACE_ID or --operation OPERATION_ID");
  }
  std::optional<tracing::TraceId> trace_id;
  if (!by_operation) {
    trace_id = tracing::ParseTraceId(flags.positional().front());
    if (!trace_id)
      return FailCommand(err, "traces", 2,
                         "'" + flags.positional().front() + "' is not a trace id (32 hex digits)");
  }
  auto store = OpenStore(flags);
  if (!store.ok()) return FailCommand(err, "traces", 1, store.error().message);
  if (by_operation) {
    auto found = (*store)->FindTraceByOperation(flags.Get("operation"));
    if (!found.ok()) return FailCommand(err, "traces", 1, found.error().message);
    trace_id = *found;
  }
  auto spans = (*store)->GetTrace(*trace_id);
  if (!spans.ok()) return FailCommand(err, "traces", 1, spans.error().message);
  out << (flags.GetBool("json") ? RenderTraceJson(*spans) : RenderTraceText(*spans));
  return 0;
}

}  // namespace

int RunTracesCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (args.empty() || WantsHelp(args)) {
    (args.empty() ? err : out) << kTracesUsage << FormatFlagHelp(kTracesSpecs);
    return args.empty() ? 2 : 0;
  }
  const std::string& action = args.front();
  if (action != "list" && action != "show")
    return FailCommand(err, "traces", 2, "unknown action '" + action + "' (list or show)");
  auto flags = ParseFlags(kTracesSpecs, args.subspan(1));
  if (!flags.ok()) return FailCommand(err, "traces", 2, flags.error().message);
  if (action == "list") {
    if (!flags->positional().empty())
      return FailCommand(err, "traces", 2, "unexpected argument '" + flags->positional().front() + "'");
    return List(*flags, out, err);
  }
  return Show(*flags, out, err);
}

}  // namespace sparktrace::cli
