#include "traceview/attempt_url.h"

#include <map>
#include <optional>
#include <vector>

#include "common/url_codec.h"
#include "traceview/query_values.h"

namespace sparktrace::traceview {
namespace {

// A query value: EncodePathSegment leaves only A-Z a-z 0-9 - _ . ~, so "&", "=", "+", "#" and "%"
// are escaped as well, and the result is the same as encodeURIComponent's with "!'()*" escaped
// too (url_state.js writes exactly this).
std::string EncodeValue(std::string_view value) { return EncodePathSegment(value); }

std::string_view DownloadSuffix(Download download) {
  switch (download) {
    case Download::kChromeTrace:
      return "/chrome-trace.json";
    case Download::kOtlp:
      return "/otlp.json";
    case Download::kNone:
      break;
  }
  return "";
}

std::optional<Download> DownloadNamed(std::string_view name) {
  if (name == kChromeTraceFile) return Download::kChromeTrace;
  if (name == kOtlpFile) return Download::kOtlp;
  return std::nullopt;
}

// "a/b%2Fc/d" -> {"a", "b/c", "d"}: split first, then each segment decoded.
std::vector<std::string> SplitPath(std::string_view rest) {
  std::vector<std::string> segments;
  while (true) {
    const std::size_t slash = rest.find('/');
    segments.push_back(PercentDecode(rest.substr(0, slash)));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return segments;
}

// A trailing "chrome-trace.json" or "otlp.json" segment names a download; it is taken off.
Download TakeDownload(std::vector<std::string>& segments) {
  if (segments.empty()) return Download::kNone;
  const auto download = DownloadNamed(segments.back());
  if (!download) return Download::kNone;
  segments.pop_back();
  return *download;
}

Result<std::int64_t> MapIndex(const std::map<std::string, std::string, std::less<>>& query,
                              std::string_view name) {
  const auto found = query.find(name);
  if (found == query.end() || found->second.empty()) return std::int64_t{-1};
  return ParseMapIndex(name, found->second);
}

// Every id of an address is checked before it is looked up (query_values.h): bytes that are not
// UTF-8 are the client's mistake (400), not the store's (PostgreSQL refuses them with an error).
Result<void> CheckIds(const tracing::store::TaskAttemptKey& key) {
  for (const auto& [name, value] : {std::pair{kDagParameter, &key.dag_id},
                                    {kTaskParameter, &key.task_id},
                                    {kRunParameter, &key.run_id}}) {
    if (auto checked = CheckAddressId(name, *value); !checked.ok()) return checked.error();
  }
  return {};
}

Result<tracing::store::TaskAttemptKey> ParseLegacyAttempt(std::string_view rest, std::string_view query,
                                                          Download& download) {
  std::vector<std::string> segments = SplitPath(rest);
  download = TakeDownload(segments);
  if (segments.size() != 4) return InvalidArgument("expected /api/v1/tasks/<dag>/<task>/<run>/<try>");
  const auto try_number = ParseTryNumber(kTryParameter, segments[3]);
  if (!try_number.ok()) return try_number.error();
  auto map_index = MapIndex(ParseQuery(query), kLegacyMapIndexParameter);
  if (!map_index.ok()) return map_index.error();
  tracing::store::TaskAttemptKey key{std::move(segments[0]), std::move(segments[1]), std::move(segments[2]),
                                     *try_number, *map_index};
  if (auto checked = CheckIds(key); !checked.ok()) return checked.error();
  return key;
}

}  // namespace

std::string AttemptQuery(const tracing::store::TaskAttemptKey& key) {
  std::string query;
  query.append(kDagParameter).append("=").append(EncodeValue(key.dag_id));
  query.append("&").append(kTaskParameter).append("=").append(EncodeValue(key.task_id));
  query.append("&").append(kRunParameter).append("=").append(EncodeValue(key.run_id));
  query.append("&").append(kTryParameter).append("=").append(std::to_string(key.try_number));
  if (key.map_index != -1)
    query.append("&").append(kMapParameter).append("=").append(std::to_string(key.map_index));
  return query;
}

std::string AttemptPageHref(const tracing::store::TaskAttemptKey& key) {
  return std::string(kAttemptPagePath) + "?" + AttemptQuery(key);
}

std::string AttemptApiHref(const tracing::store::TaskAttemptKey& key, Download download) {
  return std::string(kAttemptApiPath) + std::string(DownloadSuffix(download)) + "?" + AttemptQuery(key);
}

std::string TracePageHref(std::string_view trace_id) {
  return std::string(kTracePagePrefix) + EncodePathSegment(trace_id);
}

std::string TraceApiHref(std::string_view trace_id, Download download) {
  return std::string(kTraceApiPrefix) + EncodePathSegment(trace_id) + std::string(DownloadSuffix(download));
}

Result<tracing::store::TaskAttemptKey> ParseAttemptQuery(std::string_view query) {
  const auto parameters = ParseQuery(query);
  const auto required = [&parameters](std::string_view name) -> const std::string* {
    const auto found = parameters.find(name);
    return found == parameters.end() ? nullptr : &found->second;
  };
  tracing::store::TaskAttemptKey key;
  for (const auto& [name, target] : {std::pair{kDagParameter, &key.dag_id},
                                     {kTaskParameter, &key.task_id},
                                     {kRunParameter, &key.run_id}}) {
    const std::string* value = required(name);
    if (value == nullptr) return InvalidArgument("missing query parameter " + std::string(name));
    *target = *value;
  }
  const std::string* try_text = required(kTryParameter);
  if (try_text == nullptr) return InvalidArgument("missing query parameter try");
  const auto try_number = ParseTryNumber(kTryParameter, *try_text);
  if (!try_number.ok()) return try_number.error();
  key.try_number = *try_number;
  auto map_index = MapIndex(parameters, kMapParameter);
  if (!map_index.ok()) return map_index.error();
  key.map_index = *map_index;
  if (auto checked = CheckIds(key); !checked.ok()) return checked.error();
  return key;
}

Result<AttemptAddress> ParseAttemptApiPath(std::string_view path, std::string_view query) {
  AttemptAddress address;
  if (path.starts_with(kLegacyAttemptApiPrefix)) {
    auto key = ParseLegacyAttempt(path.substr(kLegacyAttemptApiPrefix.size()), query, address.download);
    if (!key.ok()) return key.error();
    address.key = std::move(key).value();
    return address;
  }
  if (!path.starts_with(kAttemptApiPath)) return Error{ErrorCode::kNotFound, "not an attempt address"};
  const std::string_view rest = path.substr(kAttemptApiPath.size());
  if (!rest.empty()) {
    const auto download = rest.starts_with('/') ? DownloadNamed(rest.substr(1)) : std::nullopt;
    if (!download) return Error{ErrorCode::kNotFound, "no such download"};  // never the client's text
    address.download = *download;
  }
  auto key = ParseAttemptQuery(query);
  if (!key.ok()) return key.error();
  address.key = std::move(key).value();
  return address;
}

std::string SqlPlanApiHref(std::string_view trace_id, std::string_view span_id) {
  return std::string(kTraceApiPrefix) + EncodeValue(trace_id) + "/" + std::string(kSqlPlanSegment) +
         "?span=" + EncodeValue(span_id);
}

Result<TraceAddress> ParseTraceApiPath(std::string_view path) {
  if (!path.starts_with(kTraceApiPrefix)) return Error{ErrorCode::kNotFound, "not a trace address"};
  std::vector<std::string> segments = SplitPath(path.substr(kTraceApiPrefix.size()));
  TraceAddress address;
  address.download = TakeDownload(segments);
  if (address.download == Download::kNone && segments.size() == 2 && segments.back() == kSqlPlanSegment) {
    address.sql_plan = true;
    segments.pop_back();
  }
  if (segments.size() != 1) return InvalidArgument("expected /api/v1/traces/<trace id>");
  address.trace_id = std::move(segments[0]);
  return address;
}

}  // namespace sparktrace::traceview
