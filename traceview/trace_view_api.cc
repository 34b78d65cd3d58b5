#include "traceview/trace_view_api.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "admin/http_caching.h"
#include "common/json_writer.h"
#include "common/url_codec.h"
#include "traceview/attempt_json.h"
#include "traceview/attempt_reader.h"
#include "traceview/attempt_revision.h"
#include "traceview/attempt_spans.h"
#include "traceview/attempt_url.h"
#include "traceview/breakdown.h"
#include "traceview/chrome_trace.h"
#include "traceview/embedded_files.h"
#include "traceview/executor_series.h"
#include "traceview/otlp_json.h"
#include "traceview/query_values.h"
#include "traceview/span_lanes.h"
#include "traceview/view_time.h"
#include "tracing/attribute_json.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/open/open_span_store.h"

namespace sparktrace::traceview {
namespace {

using admin::HttpRequest;
using admin::HttpResponse;
using nlohmann::ordered_json;

HttpResponse JsonResponse(int status, const ordered_json& body) {
  return HttpResponse{status, "application/json; charset=utf-8", tracing::DumpJson(body) + "\n", {}};
}

HttpResponse JsonError(int status, std::string message) {
  return JsonResponse(status, {{"error", std::move(message)}});
}

// A read-only SQLite store whose file is not there (yet): 404, without the path.
constexpr std::string_view kNoStoreMessage = "no trace store here yet";
// The trace ids a row of the task list names, at most (the first in id order; trace_ids_truncated says
// when the attempt has more). The attempt's own answer names them all.
constexpr std::size_t kListedTraceIds = 20;

std::string_view ContentTypeOf(std::string_view name) {
  const auto ends = [name](std::string_view suffix) { return name.ends_with(suffix); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js") || ends(".mjs")) return "application/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json; charset=utf-8";
  if (ends(".md")) return "text/markdown; charset=utf-8";
  return "application/octet-stream";
}

std::optional<HttpResponse> EmbeddedFileResponse(std::string_view name) {
  const EmbeddedFile* file = FindEmbeddedFile(name);
  if (file == nullptr) return std::nullopt;
  return HttpResponse{200, std::string(ContentTypeOf(name)), std::string(file->content), {}};
}

bool IsPagePath(std::string_view path) {
  return path == "/" || path == "/index.html" || path == kAttemptPagePath ||
         path.starts_with(kLegacyAttemptPagePrefix) || path.starts_with(kTracePagePrefix) ||
         path.starts_with("/recipes/");
}

bool IsAttemptApiPath(std::string_view path) {
  return path == kAttemptApiPath || path.starts_with(std::string(kAttemptApiPath) + "/") ||
         path.starts_with(kLegacyAttemptApiPrefix);
}

// The parsers' messages name the parameter and its rule, never the client's value (query_values.h).
HttpResponse AddressError(const Error& error) {
  return JsonError(error.code == ErrorCode::kNotFound ? 404 : 400, error.message);
}

StoreOpener ReaderOf(const TraceViewOptions& options) {
  if (options.open_store) return options.open_store;
  return [location = options.store] {
    tracing::store::StoreOptions reader;
    reader.read_only = true;
    // A reader waits less than a writer would: a page that cannot read now says so (503) quickly.
    reader.busy_timeout = std::chrono::seconds(2);
    return tracing::store::OpenSpanStore(location, reader);
  };
}

ordered_json PhasesOfRow(const tracing::store::TaskAttemptRow& row) {
  const double wall = AttemptWallMs(row);
  double driver = 0;
  for (const std::int64_t ms : row.phase_ms) driver += static_cast<double>(ms);
  const auto driver_ms = [&row](tracing::SparkPhase phase) {
    return row.phase_ms[static_cast<std::size_t>(phase)];
  };
  return {{ViewPhaseName(ViewPhase::kClient), std::max(0.0, wall - driver)},
          {ViewPhaseName(ViewPhase::kResourceWait), driver_ms(tracing::SparkPhase::kResourceWait)},
          {ViewPhaseName(ViewPhase::kCompute), driver_ms(tracing::SparkPhase::kCompute)},
          {ViewPhaseName(ViewPhase::kIoWrite), driver_ms(tracing::SparkPhase::kIoWrite)},
          {ViewPhaseName(ViewPhase::kIdle), driver_ms(tracing::SparkPhase::kIdle)},
          {ViewPhaseName(ViewPhase::kResultTransfer), 0}};
}

std::string RowHref(const tracing::store::TaskAttemptRow& row) {
  if (row.airflow) return AttemptPageHref(row.key);
  return TracePageHref(row.trace_ids.empty() ? "" : row.trace_ids.front());
}

ordered_json OptionalNumber(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

// The settled figures (attempt_settler.h) of a row: null until it is settled, and while it runs
// again (figures of an earlier version are not its cost). `current` is false when a span arrived
// after settling: the figures are the last settled ones until the settler comes round again.
ordered_json SettledCostJson(const tracing::store::TaskAttemptRow& row) {
  if (!row.settled || row.state == "running") return nullptr;
  const tracing::store::SettledFigures& figures = *row.settled;
  return {{"core_seconds", OptionalNumber(figures.core_seconds)},
          {"gib_seconds", OptionalNumber(figures.gib_seconds)},
          {"money", OptionalNumber(figures.money)},
          {"idle_fraction", OptionalNumber(figures.idle_fraction)},
          {"regression", figures.regression},
          {"settled_ms", NanosToMs(figures.settled_unix_nano)},
          {"current", row.settled_current}};
}

ordered_json TaskRowJson(const tracing::store::TaskAttemptRow& row) {
  ordered_json trace_ids = ordered_json::array();
  for (const std::string& trace_id : row.trace_ids) trace_ids.push_back(trace_id);
  ordered_json top = nullptr;
  if (!row.top_finding_json.empty()) {
    top = ordered_json::parse(row.top_finding_json, nullptr, /*allow_exceptions=*/false);
    if (top.is_discarded()) top = nullptr;
  }
  const double start = AttemptStartMs(row);
  const double wall = AttemptWallMs(row);
  ordered_json json = {{"kind", row.airflow ? "airflow" : "trace"}};
  if (row.airflow) {
    json["dag_id"] = row.key.dag_id;
    json["task_id"] = row.key.task_id;
    json["run_id"] = row.key.run_id;
    json["try_number"] = row.key.try_number;
    json["map_index"] = row.key.map_index;
  }
  json["name"] = row.name;
  json["trace_ids"] = std::move(trace_ids);
  json["trace_ids_truncated"] = row.trace_ids_truncated;
  json["state"] = row.state;
  json["start_ms"] = start;
  json["end_ms"] = start + wall;
  json["wall_ms"] = wall;
  json["phases"] = PhasesOfRow(row);
  json["finding_count"] = row.finding_count;
  json["top_finding"] = std::move(top);
  json["cost"] = SettledCostJson(row);
  json["href"] = RowHref(row);
  return json;
}

AttemptLink LinkOf(const tracing::store::TaskAttemptRow& row) {
  return AttemptLink{row.key.run_id, row.key.try_number, row.state, AttemptWallMs(row), RowHref(row)};
}

// A download of the attempt's spans, or nullopt when none was asked for.
std::optional<HttpResponse> DownloadResponse(Download download, std::span<const tracing::Span> spans,
                                             const Breakdown& breakdown, std::string_view title) {
  switch (download) {
    case Download::kChromeTrace:
      return HttpResponse{
          200,
          "application/json; charset=utf-8",
          ChromeTraceJson(spans, ComputeExecutorSeries(spans, breakdown.start_ms, breakdown.end_ms), title),
          {{"Content-Disposition", "attachment; filename=\"sparktrace-chrome-trace.json\""}}};
    case Download::kOtlp:
      return HttpResponse{200,
                          "application/json; charset=utf-8",
                          OtlpJson(spans),
                          {{"Content-Disposition", "attachment; filename=\"sparktrace-otlp.json\""}}};
    case Download::kNone:
      break;
  }
  return std::nullopt;
}

// An attempt's answer as kept in the cache, gzip-compressed (once, then kept) when the client takes it.
HttpResponse CachedAttemptResponse(AnswerCache& cache, const std::string& etag, const std::string& body,
                                   const HttpRequest& request) {
  const auto accept = request.header ? request.header("Accept-Encoding") : std::nullopt;
  if (accept && admin::AcceptsGzip(*accept)) {
    if (std::optional<std::string> gzipped = cache.Gzipped(etag)) {
      return HttpResponse{200,
                          "application/json; charset=utf-8",
                          std::move(*gzipped),
                          {{"ETag", etag}, {"Content-Encoding", "gzip"}, {"Vary", "Accept-Encoding"}}};
    }
  }
  return HttpResponse{200, "application/json; charset=utf-8", body, {{"ETag", etag}}};
}

HttpResponse AttemptResponse(std::span<const tracing::Span> spans, const Breakdown& breakdown,
                             const AttemptContext& context) {
  std::string body = AttemptJson(spans, breakdown, context);
  body.push_back('\n');
  return HttpResponse{200, "application/json; charset=utf-8", std::move(body), {}};
}

}  // namespace

const EmbeddedFile* FindEmbeddedFile(std::string_view name) {
  for (const EmbeddedFile& file : EmbeddedFiles()) {
    if (file.name == name) return &file;
  }
  return nullptr;
}

TraceViewApi::TraceViewApi(TraceViewOptions options)
    : options_(std::move(options)),
      store_(ReaderOf(options_)),
      cache_(options_.cache_bytes),
      revision_salt_(fmt::format(
          "{}|{}:{}|{}:{}|{}|{}|{}", std::chrono::system_clock::now().time_since_epoch().count(),
          options_.spark_ui_url.size(), options_.spark_ui_url, options_.history_server_url.size(),
          options_.history_server_url, options_.prices.core_hour.value_or(-1),
          options_.prices.gib_hour.value_or(-1), options_.max_spans)) {}
TraceViewApi::~TraceViewApi() = default;

HttpResponse TraceViewApi::StoreFailure(const Error& error, std::string_view not_found) {
  // The store's messages name it (a file's path, the URL without its password) and carry libpq's
  // words: the log's, not a client's.
  if (error.code == ErrorCode::kNotFound) return JsonError(404, std::string(not_found));
  store_.Failed(error);
  return JsonError(503, std::string(kStoreUnreadableMessage));
}

bool TraceViewApi::Serves(std::string_view path) {
  return IsPagePath(path) || path.starts_with("/assets/") || path.starts_with("/api/v1/recipes/") ||
         path == "/api/v1/tasks" || IsAttemptApiPath(path) || path.starts_with(kTraceApiPrefix);
}

AttemptContext TraceViewApi::NewContext() const {
  AttemptContext context;
  context.spark_ui_url = options_.spark_ui_url;
  context.history_server_url = options_.history_server_url;
  context.prices = options_.prices;
  return context;
}

std::optional<HttpResponse> TraceViewApi::Handle(const HttpRequest& request) {
  const std::string& path = request.path;
  if (IsPagePath(path)) return EmbeddedFileResponse("assets/index.html");
  if (path.starts_with("/assets/")) return EmbeddedFileResponse(path.substr(1));
  if (path.starts_with("/api/v1/recipes/")) {
    const std::string name =
        "recipes/" + PercentDecode(path.substr(std::string_view("/api/v1/recipes/").size()));
    if (name.find("..") != std::string::npos) return JsonError(400, "bad recipe path");
    if (auto file = EmbeddedFileResponse(name)) return file;
    return JsonError(404, "no such recipe");  // never the client's text
  }
  HttpResponse response;
  if (path == "/api/v1/tasks") {
    response = ListTasks(request);
  } else if (IsAttemptApiPath(path)) {
    auto address = ParseAttemptApiPath(path, request.query);
    response = address.ok() ? ShowAttempt(*address, request) : AddressError(address.error());
  } else if (path.starts_with(kTraceApiPrefix)) {
    auto address = ParseTraceApiPath(path);
    if (!address.ok()) {
      response = AddressError(address.error());
    } else {
      response = address->sql_plan ? ShowSqlPlan(*address, request.query) : ShowTrace(*address);
    }
  } else {
    return std::nullopt;
  }
  return response;
}

HttpResponse TraceViewApi::ListTasks(const HttpRequest& request) {
  auto query = ParseTaskListQuery(request.query);
  if (!query.ok()) return JsonError(400, query.error().message);
  tracing::store::TaskAttemptFilter& filter = query->filter;
  auto store = store_.Get();
  if (!store.ok()) return StoreFailure(store.error(), kNoStoreMessage);
  if (query->search) {
    auto traces = (*store)->TracesMatching(*query->search);
    if (!traces.ok()) return StoreFailure(traces.error(), kNoStoreMessage);
    filter.trace_ids = std::move(traces).value();
  }
  filter.max_trace_ids = kListedTraceIds;
  auto page = (*store)->ListTaskAttempts(filter);
  if (!page.ok()) return StoreFailure(page.error(), kNoStoreMessage);
  ordered_json tasks = ordered_json::array();
  for (const tracing::store::TaskAttemptRow& row : page->rows) tasks.push_back(TaskRowJson(row));
  return JsonResponse(200, {{"schema", "sparktrace.tasks/2"},
                            {"total", page->total},
                            {"offset", filter.offset},
                            {"limit", filter.limit},
                            {"tasks", std::move(tasks)}});
}

HttpResponse TraceViewApi::ShowAttempt(const AttemptAddress& address, const HttpRequest& request) {
  const tracing::store::TaskAttemptKey& key = address.key;
  auto store = store_.Get();
  if (!store.ok()) return StoreFailure(store.error(), kNoStoreMessage);
  auto rows = AttemptReader::ReadRows(**store, key);
  if (!rows.ok()) return StoreFailure(rows.error(), "no such task attempt");
  // The answer is a function of these rows: a page that has it already gets a 304 now, before its
  // spans are read (tens of thousands for a large attempt).
  const std::string etag = AttemptRevisionTag(
      rows->attempts, rows->current, fmt::format("{}|{}", revision_salt_, static_cast<int>(address.download)));
  if (const auto if_none_match = request.header ? request.header("If-None-Match") : std::nullopt;
      if_none_match && admin::MatchesIfNoneMatch(*if_none_match, etag)) {
    store_.metrics()->AddNotModified();
    return HttpResponse{304, "application/json; charset=utf-8", "", {{"ETag", etag}}};
  }
  if (address.download == Download::kNone) {
    if (const std::string* body = cache_.Find(etag)) return CachedAttemptResponse(cache_, etag, *body, request);
  }
  auto read = reader_.Read(**store, std::move(rows).value());
  if (!read.ok()) return StoreFailure(read.error(), "no such task attempt");
  const tracing::store::TaskAttemptRow& row = read->row();
  const std::vector<tracing::Span>& spans = read->spans;
  const Breakdown& breakdown = read->breakdown;
  if (auto file = DownloadResponse(
          address.download, spans, breakdown,
          fmt::format("{}.{} {} try {}", key.dag_id, key.task_id, key.run_id, key.try_number))) {
    file->headers.emplace_back("ETag", etag);
    return *file;
  }

  AttemptContext context = NewContext();
  context.airflow = true;
  context.key = key;
  context.name = row.name;
  context.trace_ids = row.trace_ids;
  context.state = row.state;
  context.chrome_trace_href = AttemptApiHref(key, Download::kChromeTrace);
  context.otlp_href = AttemptApiHref(key, Download::kOtlp);
  // Rows are newest first: runs before this one are further down the list.
  std::vector<const tracing::store::TaskAttemptRow*> tries;
  for (const tracing::store::TaskAttemptRow& other : read->attempts) {
    if (other.key.run_id == key.run_id) tries.push_back(&other);
    if (other.key.run_id != key.run_id) {
      if (other.start_unix_nano < row.start_unix_nano) {
        if (!context.previous_run) context.previous_run = LinkOf(other);
      } else {
        context.next_run = LinkOf(other);  // the last one seen is the closest later run
      }
    }
  }
  std::sort(tries.begin(), tries.end(),
            [](const auto* a, const auto* b) { return a->key.try_number < b->key.try_number; });
  for (const auto* attempt : tries) context.tries.push_back(LinkOf(*attempt));
  context.history = std::move(read->history);
  context.max_spans = options_.max_spans;
  HttpResponse response = AttemptResponse(spans, breakdown, context);
  if (options_.max_spans != 0 && spans.size() > options_.max_spans) {
    store_.metrics()->AddBoundedAnswer(spans.size() - options_.max_spans);
  }
  if (cache_.Keeps(response.body.size())) {
    return CachedAttemptResponse(cache_, etag, cache_.Put(etag, std::move(response.body)), request);
  }
  response.headers.emplace_back("ETag", etag);  // too large to keep: the admin server compresses it
  return response;
}

HttpResponse TraceViewApi::ShowSqlPlan(const TraceAddress& address, std::string_view query) {
  const auto trace_id = tracing::ParseTraceId(address.trace_id);
  if (!trace_id) return JsonError(400, "a trace id is 32 hex digits");
  const auto span_id = ParseSqlPlanQuery(query);
  if (!span_id.ok()) return JsonError(400, span_id.error().message);
  auto store = store_.Get();
  if (!store.ok()) return StoreFailure(store.error(), kNoStoreMessage);
  auto spans = (*store)->GetTrace(*trace_id);
  if (!spans.ok()) return StoreFailure(spans.error(), "no such trace");
  const auto span = std::find_if(spans->begin(), spans->end(), [&](const tracing::Span& candidate) {
    return candidate.span_id == *span_id && candidate.name == tracing::kSparkSqlExecutionSpanName;
  });
  if (span == spans->end()) return JsonError(404, "no such SQL execution span in this trace");
  const auto* plan = tracing::AttributeValueOf<std::string>(span->attributes, tracing::kSparkSqlPlanKey);
  // The store holds what a producer wrote: only well-formed JSON goes into the answer as it is.
  if (plan == nullptr || !nlohmann::json::accept(*plan)) {
    return JsonError(404, "this SQL execution has no plan (none kept, or --sql-plan-max-bytes 0)");
  }
  JsonWriter out;
  out.BeginObject().Key("schema").String("sparktrace.sql_plan/1");
  out.Key("trace_id").String(tracing::ToHex(*trace_id)).Key("span_id").String(tracing::ToHex(*span_id));
  out.Key("execution_id");
  if (const auto id = IntAttribute(*span, tracing::kSparkSqlExecutionIdKey)) {
    out.Int(*id);
  } else {
    out.Null();
  }
  out.Key("plan").Raw(*plan).EndObject();
  std::string body = out.Take();
  body.push_back('\n');
  return HttpResponse{200, "application/json; charset=utf-8", std::move(body), {}};
}

HttpResponse TraceViewApi::ShowTrace(const TraceAddress& address) {
  const auto trace_id = tracing::ParseTraceId(address.trace_id);
  if (!trace_id) return JsonError(400, "a trace id is 32 hex digits");
  auto store = store_.Get();
  if (!store.ok()) return StoreFailure(store.error(), kNoStoreMessage);
  auto spans = (*store)->GetTrace(*trace_id);
  if (!spans.ok()) return StoreFailure(spans.error(), "no such trace");
  const std::string trace_hex = tracing::ToHex(*trace_id);
  const Breakdown breakdown = ComputeBreakdown(*spans);
  if (auto file = DownloadResponse(address.download, *spans, breakdown, "trace " + trace_hex)) return *file;
  AttemptContext context = NewContext();
  context.airflow = false;
  context.name = "trace " + trace_hex;
  context.trace_ids = {trace_hex};
  context.state = "success";
  context.chrome_trace_href = TraceApiHref(trace_hex, Download::kChromeTrace);
  context.otlp_href = TraceApiHref(trace_hex, Download::kOtlp);
  tracing::store::TaskAttemptFilter filter;
  filter.trace_ids = std::vector<std::string>{trace_hex};
  filter.limit = 10;
  // Only the name and state come from here: the trace is shown without them if this fails.
  if (auto rows = (*store)->ListTaskAttempts(filter); rows.ok()) {
    for (const tracing::store::TaskAttemptRow& row : rows->rows) {
      if (row.airflow) continue;
      context.name = row.name;
      context.state = row.state;
    }
  }
  context.max_spans = options_.max_spans;
  if (options_.max_spans != 0 && spans->size() > options_.max_spans) {
    store_.metrics()->AddBoundedAnswer(spans->size() - options_.max_spans);
  }
  return AttemptResponse(*spans, breakdown, context);
}

}  // namespace sparktrace::traceview
