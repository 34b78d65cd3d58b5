#include "listener/rest/rest_poller.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "listener/rest/rest_event_differ.h"
#include "listener/rest/rest_http_client.h"
#include "listener/rest/rest_json.h"
#include "listener/rest/spark_ui_endpoint.h"

namespace sparktrace::listener::rest {
namespace {

// Application ids are [A-Za-z0-9_-] in every cluster manager; anything else is escaped rather than
// trusted into a path.
std::string EscapePathSegment(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string escaped;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') || (byte >= '0' && byte <= '9') ||
        byte == '-' || byte == '_' || byte == '.') {
      escaped += c;
    } else {
      escaped += '%';
      escaped += kHex[byte >> 4];
      escaped += kHex[byte & 0x0F];
    }
  }
  return escaped;
}

}  // namespace

struct RestPoller::Impl {
  Impl(RestPollerOptions options_in, std::unique_ptr<RestHttpClient> client_in)
      : options(std::move(options_in)), client(std::move(client_in)) {}

  // GETs `path` and reads it with `read`; nullopt (counted, reported) on any failure.
  template <typename Parsed, typename Read>
  std::optional<Parsed> Fetch(const std::string& path, Read read, RestPollResult& result) {
    ++counters.requests;
    FetchResult fetched = client->Get(path);
    switch (fetched.outcome) {
      case FetchOutcome::kOk:
        break;
      case FetchOutcome::kUnreachable:
        ++counters.unreachable;
        break;
      case FetchOutcome::kTimedOut:
        ++counters.timed_out;
        break;
      case FetchOutcome::kHttpError:
        ++counters.http_errors;
        break;
      case FetchOutcome::kTooLarge:
        ++counters.too_large;
        break;
    }
    if (fetched.outcome != FetchOutcome::kOk) {
      result.errors.push_back(Error{ErrorCode::kUnavailable, std::move(fetched.error)});
      return std::nullopt;
    }
    auto parsed = read(fetched.body);
    if (!parsed.ok()) {
      ++counters.bad_json;
      result.errors.push_back(Error{ErrorCode::kInvalidArgument,
                                    "GET " + client->base_url() + path + ": " + parsed.error().message});
      return std::nullopt;
    }
    return std::move(parsed).value();
  }

  const RestPollerOptions options;
  std::unique_ptr<RestHttpClient> client;
  RestJsonReader json;
  std::map<std::string, RestEventDiffer> differs;  // by "<app id>[/<attempt id>]"
  RestFeedCounters counters;
};

Result<std::unique_ptr<RestPoller>> RestPoller::Create(RestPollerOptions options) {
  auto endpoint = ParseSparkUiUrl(options.spark_ui_url);
  if (!endpoint.ok()) return endpoint.error();
  if (options.max_applications == 0) return InvalidArgument("REST feed: max_applications must be positive");
  auto client =
      RestHttpClient::Create(std::move(endpoint).value(),
                             RestHttpClientOptions{options.request_timeout, options.max_response_bytes});
  if (!client.ok()) return client.error();
  return std::make_unique<RestPoller>(std::make_unique<Impl>(std::move(options), std::move(client).value()));
}

RestPoller::RestPoller(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestPoller::~RestPoller() = default;

RestPollResult RestPoller::Poll() {
  Impl& impl = *impl_;
  RestPollResult result;
  ++impl.counters.polls;
  const std::string api = "/api/v1/applications";

  auto applications = impl.Fetch<std::vector<RestApplication>>(
      api, [&](const std::string& body) { return impl.json.Applications(body); }, result);
  if (!applications) return result;

  std::set<std::string> listed;
  for (const RestApplication& app : *applications) {
    if (!impl.options.application_id.empty() && app.id != impl.options.application_id) continue;
    if (listed.size() >= impl.options.max_applications) {
      ++impl.counters.applications_skipped;
      continue;
    }
    // Per attempt: a new attempt (YARN/Kubernetes cluster mode retry) is a new run of the driver,
    // with its own jobs, and starts again with ApplicationStart, as its event log would.
    std::string path_segments = EscapePathSegment(app.id);
    if (app.attempt_id) path_segments += "/" + EscapePathSegment(*app.attempt_id);
    if (!listed.insert(path_segments).second) continue;  // listed twice: the first is the newest
    RestEventDiffer& differ = impl.differs[path_segments];
    RestApplicationSnapshot snapshot{app, std::nullopt, std::nullopt, std::nullopt};
    // An ended application does not change; a History Server keeps serving it, so stop asking.
    if (!differ.ended()) {
      // The History Server needs the attempt in the path when the application has attempt ids.
      const std::string app_path = std::string(api).append("/").append(path_segments);
      snapshot.jobs = impl.Fetch<std::vector<RestJob>>(
          app_path + "/jobs", [&](const std::string& body) { return impl.json.Jobs(body); }, result);
      snapshot.stages = impl.Fetch<std::vector<RestStage>>(
          app_path + "/stages", [&](const std::string& body) { return impl.json.Stages(body); }, result);
      // allexecutors, not executors: removed executors (removeTime, removeReason) are only there.
      snapshot.executors = impl.Fetch<std::vector<RestExecutor>>(
          app_path + "/allexecutors", [&](const std::string& body) { return impl.json.Executors(body); },
          result);
    }
    const std::uint64_t lost_before = differ.jobs_lost();
    differ.Observe(snapshot, result.events);
    impl.counters.jobs_lost += differ.jobs_lost() - lost_before;
  }
  // Applications the server no longer lists (History Server cleanup) are forgotten.
  std::erase_if(impl.differs, [&](const auto& entry) { return !listed.contains(entry.first); });
  impl.counters.applications_tracked = impl.differs.size();
  impl.counters.events += result.events.size();
  return result;
}

RestFeedCounters RestPoller::counters() const { return impl_->counters; }

}  // namespace sparktrace::listener::rest
