#include "cli/traces_command.h"

#include <array>
#include <charconv>

#include "common/flags.h"
#include "tracing/store/open_span_store.h"
#include "tracing/trace_tree.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kUsage =
    "Usage: sparktrace traces list [--dag ID] [--task ID] [--run ID] [--limit N] [--json]\n"
    "       sparktrace traces show TRACE_ID [--json]\n"
    "       sparktrace traces show --operation OPERATION_ID [--json]\n"
    "\n"
    "Reads the traces the proxy stored (--store). `list` shows the newest traces, optionally of one\n"
    "Airflow DAG / task / run; `show` prints one trace as a tree with durations.\n"
    "\n";

const std::array<FlagSpec, 8> kSpecs = {{
    {"store", "PATH|URL", "sparktrace.db", "the trace store the proxy writes (a SQLite file or a postgresql:// URL)"},
    {"dag", "ID", "", "list: only traces of this Airflow DAG id"},
    {"task", "ID", "", "list: only traces of this Airflow task id"},
    {"run", "ID", "", "list: only traces of this Airflow run id"},
    {"limit", "N", "50", "list: at most this many traces, newest first (0 = all)"},
    {"operation", "ID", "", "show: the trace of this Spark Connect operation id"},
    {"json", "", "", "print JSON instead of text"},
    {"help", "", "", "show this help"},
}};

int Fail(std::ostream& err, int code, const std::string& message) {
  err << "sparktrace traces: " << message << "\n";
  return code;
}

Result<std::unique_ptr<tracing::store::SpanStore>> OpenStore(const ParsedFlags& flags) {
  auto location = tracing::store::ParseStoreLocation(flags.Get("store"));
  if (!location.ok()) return FlagError("store", location.error());
  tracing::store::StoreOptions options;
  options.read_only = true;
  return tracing::store::OpenSpanStore(*location, options);
}

int List(const ParsedFlags& flags, std::ostream& out, std::ostream& err) {
  tracing::store::TraceFilter filter;
  if (flags.IsSet("dag")) filter.dag_id = flags.Get("dag");
  if (flags.IsSet("task")) filter.task_id = flags.Get("task");
  if (flags.IsSet("run")) filter.run_id = flags.Get("run");
  const std::string& limit_text = flags.Get("limit");
  std::size_t limit = 0;
  auto [end, ec] = std::from_chars(limit_text.data(), limit_text.data() + limit_text.size(), limit);
  if (ec != std::errc() || end != limit_text.data() + limit_text.size()) {
    return Fail(err, 2, "--limit: '" + limit_text + "' is not a number");
  }
  filter.limit = limit;
  auto store = OpenStore(flags);
  if (!store.ok()) return Fail(err, 1, store.error().message);
  auto traces = (*store)->ListTraces(filter);
  if (!traces.ok()) return Fail(err, 1, traces.error().message);
  out << (flags.GetBool("json") ? tracing::RenderTraceListJson(*traces) : tracing::RenderTraceListText(*traces));
  return 0;
}

int Show(const ParsedFlags& flags, std::ostream& out, std::ostream& err) {
  const bool by_operation = flags.IsSet("operation");
  if (by_operation == !flags.positional().empty() || flags.positional().size() > 1) {
    return Fail(err, 2, "show takes one TRACE_ID or --operation OPERATION_ID");
  }
  std::optional<tracing::TraceId> trace_id;
  if (!by_operation) {
    trace_id = tracing::ParseTraceId(flags.positional().front());
    if (!trace_id) return Fail(err, 2, "'" + flags.positional().front() + "' is not a trace id (32 hex digits)");
  }
  auto store = OpenStore(flags);
  if (!store.ok()) return Fail(err, 1, store.error().message);
  if (by_operation) {
    auto found = (*store)->FindTraceByOperation(flags.Get("operation"));
    if (!found.ok()) return Fail(err, 1, found.error().message);
    trace_id = *found;
  }
  auto spans = (*store)->GetTrace(*trace_id);
  if (!spans.ok()) return Fail(err, 1, spans.error().message);
  out << (flags.GetBool("json") ? tracing::RenderTraceJson(*spans) : tracing::RenderTraceText(*spans));
  return 0;
}

}  // namespace

int RunTracesCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (args.empty() || WantsHelp(args)) {
    (args.empty() ? err : out) << kUsage << FormatFlagHelp(kSpecs);
    return args.empty() ? 2 : 0;
  }
  const std::string& action = args.front();
  if (action != "list" && action != "show") return Fail(err, 2, "unknown action '" + action + "' (list or show)");
  auto flags = ParseFlags(kSpecs, args.subspan(1));
  if (!flags.ok()) return Fail(err, 2, flags.error().message);
  if (action == "list") {
    if (!flags->positional().empty()) return Fail(err, 2, "unexpected argument '" + flags->positional().front() + "'");
    return List(*flags, out, err);
  }
  return Show(*flags, out, err);
}

}  // namespace sparktrace::cli
