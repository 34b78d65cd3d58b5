// The addresses of attempt pages and their JSON (traceview/attempt_url.h): every awkward id round-trips
// through the one encoder and the one decoder, and never makes a path segment a URL parser rewrites.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "traceview/attempt_url.h"

namespace sparktrace::traceview {
namespace {

using tracing::store::TaskAttemptKey;

// Ids Airflow allows (or a store may hold) that break paths: dot segments, slashes, the query and
// fragment marks, escapes, "+", spaces, an empty run id (the proxy stores one when none was sent),
// Unicode.
const std::vector<std::string> kAwkwardIds = {
    ".",
    "..",
    "...",
    "%2E%2E",
    "a/../b",
    "scheduled__2024-01-01T00:00:00+00:00",
    "manual__2024/01/01 run?x=1&y=2#frag",
    "100% done",
    "%",
    "%zz",
    "a+b c",
    "=&;",
    "~-_.",
    "!*'()",
    "ünïcødé-運行-🚀",
    "",
    "tab\there",
};

// What a URL parser may still see in a query value: only A-Z a-z 0-9 - _ . ~ and escapes.
bool OnlyUnreservedOrEscapes(std::string_view value) {
  for (const char c : value) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == '~' || c == '%';
    if (!ok) return false;
  }
  return true;
}

std::string QueryOf(const std::string& href) { return href.substr(href.find('?') + 1); }
std::string PathOf(const std::string& href) { return href.substr(0, href.find('?')); }

TEST(AttemptUrlTest, EveryAwkwardIdRoundTripsThroughPageAndApiAddresses) {
  for (const std::string& id : kAwkwardIds) {
    for (const std::int64_t map_index : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{7}}) {
      const std::vector<TaskAttemptKey> keys = {{id, "task", "run", 2, map_index},
                                                {"dag", id, "run", 2, map_index},
                                                {"dag", "task", id, 2, map_index},
                                                {id, id, id, 1, map_index}};
      for (const TaskAttemptKey& key : keys) {
        SCOPED_TRACE("id " + id + " map " + std::to_string(map_index));
        const std::string page = AttemptPageHref(key);
        EXPECT_EQ(PathOf(page), "/attempt");
        // The query is the only place ids go, and no value holds a character a parser could take as syntax.
        const std::string query_text = QueryOf(page);
        std::string_view query = query_text;
        while (!query.empty()) {
          const std::string_view pair = query.substr(0, query.find('&'));
          const std::size_t equals = pair.find('=');
          ASSERT_NE(equals, std::string_view::npos) << pair;
          EXPECT_TRUE(OnlyUnreservedOrEscapes(pair.substr(equals + 1))) << pair;
          query.remove_prefix(std::min(query.size(), pair.size() + 1));
        }
        auto parsed = ParseAttemptQuery(QueryOf(page));
        ASSERT_TRUE(parsed.ok()) << parsed.error().message;
        EXPECT_EQ(*parsed, key);

        for (const Download download : {Download::kNone, Download::kChromeTrace, Download::kOtlp}) {
          const std::string api = AttemptApiHref(key, download);
          auto address = ParseAttemptApiPath(PathOf(api), QueryOf(api));
          ASSERT_TRUE(address.ok()) << api << ": " << address.error().message;
          EXPECT_EQ(address->key, key);
          EXPECT_EQ(address->download, download);
        }
      }
    }
  }
}

TEST(AttemptUrlTest, WritesTheDocumentedShape) {
  EXPECT_EQ(AttemptPageHref({"..", ".", "manual__2024/01?a=1#b 100%+ü", 2, -1}),
            "/attempt?dag=..&task=.&run=manual__2024%2F01%3Fa%3D1%23b%20100%25%2B%C3%BC&try=2");
  EXPECT_EQ(AttemptPageHref({"etl", "load", "", 1, 3}), "/attempt?dag=etl&task=load&run=&try=1&map=3");
  EXPECT_EQ(AttemptApiHref({"etl", "load", "r", 1, -1}), "/api/v1/attempt?dag=etl&task=load&run=r&try=1");
  EXPECT_EQ(AttemptApiHref({"etl", "load", "r", 1, 4}, Download::kChromeTrace),
            "/api/v1/attempt/chrome-trace.json?dag=etl&task=load&run=r&try=1&map=4");
  EXPECT_EQ(AttemptApiHref({"etl", "load", "r", 1, -1}, Download::kOtlp),
            "/api/v1/attempt/otlp.json?dag=etl&task=load&run=r&try=1");
  EXPECT_EQ(TracePageHref("4bf92f3577b34da6a3ce929d0e0e4736"), "/traces/4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(TraceApiHref("4bf9", Download::kOtlp), "/api/v1/traces/4bf9/otlp.json");
}

TEST(AttemptUrlTest, ReadsQueriesOtherClientsWrite) {
  // URLSearchParams writes a space as "+" and leaves "*" alone; Grafana's percentencode writes %20.
  auto key = ParseAttemptQuery("dag=a+b&task=%2E&run=x%20y*&try=3&map=&span=00f0&from=1&to=2&find=q");
  ASSERT_TRUE(key.ok()) << key.error().message;
  EXPECT_EQ(*key, (TaskAttemptKey{"a b", ".", "x y*", 3, -1}));
  // Any order; a token left in the query by a login is not part of the attempt.
  key = ParseAttemptQuery("try=1&token=x&run=r&map=5&task=t&dag=d");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(*key, (TaskAttemptKey{"d", "t", "r", 1, 5}));
}

TEST(AttemptUrlTest, RejectsIncompleteOrMalformedQueriesNamingTheParameter) {
  struct Case {
    std::string query;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "missing query parameter dag"},
      {"task=t&run=r&try=1", "missing query parameter dag"},
      {"dag=d&run=r&try=1", "missing query parameter task"},
      {"dag=d&task=t&try=1", "missing query parameter run"},
      {"dag=d&task=t&run=r", "missing query parameter try"},
      {"dag=d&task=t&run=r&try=", "try must be an integer from 0 to 2147483647"},
      {"dag=d&task=t&run=r&try=1.5", "try must be an integer from 0 to 2147483647"},
      {"dag=d&task=t&run=r&try=x", "try must be an integer from 0 to 2147483647"},
      {"dag=d&task=t&run=r&try=1&map=seven", "map must be -1 or an integer from 0 to 2147483647"},
      {"dag=d&task=t&run=r&try=99999999999999999999", "try must be an integer from 0 to 2147483647"},
  };
  for (const Case& c : cases) {
    const auto key = ParseAttemptQuery(c.query);
    ASSERT_FALSE(key.ok()) << c.query;
    EXPECT_EQ(key.error().code, ErrorCode::kInvalidArgument) << c.query;
    EXPECT_EQ(key.error().message, c.message) << c.query;
  }
}

TEST(AttemptUrlTest, StillReadsTheEarlierPathShape) {
  auto address = ParseAttemptApiPath("/api/v1/tasks/etl/load/scheduled__2026-11-25T06%3A00%3A00%2B00%3A00/2",
                                     "map_index=3");
  ASSERT_TRUE(address.ok()) << address.error().message;
  EXPECT_EQ(address->key, (TaskAttemptKey{"etl", "load", "scheduled__2026-11-25T06:00:00+00:00", 2, 3}));
  EXPECT_EQ(address->download, Download::kNone);
  address = ParseAttemptApiPath("/api/v1/tasks/etl/load/a%2Fb/1/chrome-trace.json", "");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(address->key, (TaskAttemptKey{"etl", "load", "a/b", 1, -1}));
  EXPECT_EQ(address->download, Download::kChromeTrace);
  EXPECT_EQ(ParseAttemptApiPath("/api/v1/tasks/etl/load/r", "").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseAttemptApiPath("/api/v1/tasks/etl/load/r/x", "").error().message,
            "try must be an integer from 0 to 2147483647");
  EXPECT_EQ(ParseAttemptApiPath("/api/v1/tasks/etl/load/r/1", "map_index=x").error().message,
            "map_index must be -1 or an integer from 0 to 2147483647");
}

TEST(AttemptUrlTest, AnUnknownAttemptSubpathIsNotFound) {
  EXPECT_EQ(ParseAttemptApiPath("/api/v1/attempt/nope.json", "dag=d&task=t&run=r&try=1").error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(ParseAttemptApiPath("/api/v1/attempts", "dag=d&task=t&run=r&try=1").error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(ParseAttemptApiPath("/api/v1/attempt/", "dag=d&task=t&run=r&try=1").error().code,
            ErrorCode::kNotFound);
}

TEST(AttemptUrlTest, ReadsTraceAddresses) {
  auto trace = ParseTraceApiPath("/api/v1/traces/4bf9/chrome-trace.json");
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->trace_id, "4bf9");
  EXPECT_EQ(trace->download, Download::kChromeTrace);
  EXPECT_EQ(ParseTraceApiPath("/api/v1/traces/a/b").error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace sparktrace::traceview
