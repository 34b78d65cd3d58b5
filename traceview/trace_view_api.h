#pragma once
// The trace view's HTTP surface (docs/trace-view-api.md): the page for every page path, its assets,
// the recipes and the /api/v1 JSON, read from a trace store. Plugged into the admin server as its GET
// handler (admin::AdminUi), by `sparktrace proxy` over its own --store and by `sparktrace ui` over
// any store (a SQLite file or the shared PostgreSQL).
//
// Threads: Handle() is called on the admin port's trace-view thread only (admin/ui_worker.h), one
// request at a time (the store connection and the cache are not synchronised). The store is opened
// read-only on first use (SQLite's WAL and PostgreSQL's MVCC: a proxy writing to it is never
// blocked), reused by every request and opened again only once its connection is lost
// (traceview/view_store.h). Every query value is checked before the store is asked
// (traceview/query_values.h): a bad one is a 400 naming it; a store failure is a 503 that says only
// that the store cannot be read (the reason goes to the log). metrics() may be collected from any
// thread.

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "admin/admin_server.h"
#include "traceview/answer_cache.h"
#include "traceview/attempt_json.h"
#include "traceview/attempt_reader.h"
#include "traceview/attempt_url.h"
#include "traceview/span_bound.h"
#include "traceview/view_store.h"
#include "tracing/store/span_store.h"
#include "tracing/store/store_location.h"

namespace sparktrace::traceview {

struct TraceViewOptions {
  tracing::store::StoreLocation store;
  std::string spark_ui_url{};           // the live driver's UI (--spark-ui), for links from jobs and stages
  std::string history_server_url{};     // a Spark History Server (--history-server), likewise
  diagnose::cost::CostPrices prices{};  // --cost-core-hour, --cost-gib-hour: the attempts' cost in money
  StoreOpener open_store{};             // empty: `store` opened read-only (a test passes a fake here)
  std::size_t max_spans = kDefaultViewMaxSpans;      // --view-max-spans: spans an answer lists (0: all)
  std::size_t cache_bytes = kDefaultViewCacheBytes;  // --view-cache-bytes: built answers kept (0: none)
};

class TraceViewApi {
 public:
  explicit TraceViewApi(TraceViewOptions options);
  ~TraceViewApi();
  TraceViewApi(const TraceViewApi&) = delete;
  TraceViewApi& operator=(const TraceViewApi&) = delete;

  // Whether Handle answers GET on `path` (pages, assets, recipes, /api/v1/tasks, /api/v1/attempt…,
  // /api/v1/traces/…, and the earlier /api/v1/tasks/<dag>/… of attempt_url.h).
  static bool Serves(std::string_view path);

  // nullopt for a path the trace view does not serve, /api/v2/… included (the admin server answers 404).
  std::optional<admin::HttpResponse> Handle(const admin::HttpRequest& request);

  // The store connection's metrics (view_store.h), for /metrics.
  std::shared_ptr<const prometheus::Collectable> metrics() const { return store_.metrics(); }
  // The answer cache's (answer_cache.h), likewise.
  std::shared_ptr<const prometheus::Collectable> cache_metrics() const { return cache_.metrics(); }

 private:
  // 404 with `not_found` for absent data; otherwise a generic 503, the reason logged.
  admin::HttpResponse StoreFailure(const Error& error, std::string_view not_found);
  admin::HttpResponse ListTasks(const admin::HttpRequest& request);
  // Answers 304 from the index rows' revision (attempt_revision.h) when If-None-Match names it,
  // before any span is read.
  admin::HttpResponse ShowAttempt(const AttemptAddress& address, const admin::HttpRequest& request);
  admin::HttpResponse ShowTrace(const TraceAddress& address);
  // One spark.sql.execution span's plan (address.sql_plan), the span named by `query`.
  admin::HttpResponse ShowSqlPlan(const TraceAddress& address, std::string_view query);
  // An attempt's page context with what every page shares (the links to Spark's own UIs).
  AttemptContext NewContext() const;

  TraceViewOptions options_;
  ViewStore store_;
  AttemptReader reader_;  // caches the history's breakdowns across pages
  AnswerCache cache_;     // the attempt answers built last, by revision tag
  // Part of every revision tag: tags of an earlier process (another binary, other settings) never match.
  std::string revision_salt_;
};

}  // namespace sparktrace::traceview
