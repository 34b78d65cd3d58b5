// The driver-event push endpoint's pieces: body parsing, stream names, query parameters, and the
// endpoint's answers and bounded queue (feed/push_body.h, event_push_endpoint.h).

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "feed/event_push_endpoint.h"
#include "feed/push_body.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"

namespace sparktrace::feed {

using listener::events::ApplicationStart;
using listener::events::EventParser;
using listener::events::JobEnd;

namespace {

namespace tl = listener::correlate::test_lines;

std::string Lines(const std::vector<std::string>& lines) {
  std::string body;
  for (const std::string& line : lines) body += line + "\n";
  return body;
}

TEST(ListenerFeedPushBody, CountsAcceptedAndMalformedLinesAndSkipsBlankOnes) {
  EventParser parser;
  const std::string body = Lines({tl::AppStart("app-1", 1000), "{not json", "", "  \r",
                                  R"({"Event":"SparkListenerBlockManagerAdded","Timestamp":1})",
                                  tl::JobStart(1, 1100, {}, {}), R"({"no":"event"})"}) +
                           tl::JobEnd(1, 1200);  // the last line without its '\n'
  const ParsedPush parsed = ParsePushBody(body, parser);
  EXPECT_EQ(parsed.accepted, 4u);
  EXPECT_EQ(parsed.malformed, 2u);
  // The ignored event type is accepted but not kept.
  ASSERT_EQ(parsed.events.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<ApplicationStart>(parsed.events[0]));
  EXPECT_TRUE(std::holds_alternative<JobEnd>(parsed.events[2]));
  EXPECT_EQ(parsed.application, "app-1");
}

TEST(ListenerFeedPushBody, NamesTheApplicationWithItsAttempt) {
  EventParser parser;
  const ParsedPush parsed = ParsePushBody(
      R"({"Event":"SparkListenerApplicationStart","App Name":"n","App ID":"application_1_2","App Attempt ID":"3","Timestamp":5,"User":"u"})",
      parser);
  EXPECT_EQ(parsed.application, "application_1_2/3");
  EXPECT_FALSE(ParsePushBody(Lines({tl::JobEnd(1, 2)}), parser).application.has_value());
}

TEST(ListenerFeedPushBody, StreamNames) {
  EXPECT_TRUE(ValidateStreamName("app-20261122093000-0001").ok());
  EXPECT_TRUE(ValidateStreamName("application_1_2/3").ok());
  EXPECT_TRUE(ValidateStreamName("spark-abc.def:1@x+y").ok());
  for (std::string_view bad : {"", "a b", "a\"b", "a\nb", "ä", "a\\b", "a{b}"}) {
    EXPECT_FALSE(ValidateStreamName(bad).ok()) << bad;
  }
  EXPECT_TRUE(ValidateStreamName(std::string(200, 'a')).ok());
  EXPECT_FALSE(ValidateStreamName(std::string(201, 'a')).ok());
}

TEST(ListenerFeedPushBody, QueryParameters) {
  EXPECT_EQ(QueryParameter("app=x", "app"), "x");
  EXPECT_EQ(QueryParameter("a=1&app=x%2Fy&b", "app"), "x/y");
  EXPECT_EQ(QueryParameter("apps=1&app", "app"), "");
  EXPECT_EQ(QueryParameter("app=%zz", "app"), "");
  EXPECT_EQ(QueryParameter("app=%2", "app"), "");
  EXPECT_FALSE(QueryParameter("", "app").has_value());
  EXPECT_FALSE(QueryParameter("application=x", "app").has_value());
}

class ListenerFeedPushEndpoint : public ::testing::Test {
 protected:
  PushReply Push(std::string_view body, std::string_view query = "", std::optional<std::string> header = {}) {
    PushRequest request;
    request.query = query;
    request.app_header = std::move(header);
    request.body = body;
    return endpoint_.Push(request);
  }

  EventPushOptions Options() {
    EventPushOptions options;
    options.max_body_bytes = 4096;
    options.max_queued_bytes = 6000;
    options.max_queued_batches = 3;
    return options;
  }

  int wakeups_ = 0;
  EventPushEndpoint endpoint_{Options(), [this] { ++wakeups_; }};
};

TEST_F(ListenerFeedPushEndpoint, AnswersWithCountsAndQueuesInOrder) {
  const PushReply first =
      Push(Lines({tl::AppStart("app-7", 1000), "garbage", tl::JobStart(1, 1100, {}, {})}));
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "{\"accepted\":2,\"malformed\":1,\"app\":\"app-7\"}\n");
  const PushReply second = Push(Lines({tl::JobEnd(1, 1200)}), "app=app-7");
  EXPECT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(wakeups_, 2);
  const std::vector<PushedBatch> batches = endpoint_.TakeAll();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].stream, "app-7");
  EXPECT_EQ(batches[0].events.size(), 2u);
  EXPECT_EQ(batches[1].stream, "app-7");
  EXPECT_TRUE(endpoint_.TakeAll().empty());
  const EventPushCounters counters = endpoint_.counters();
  EXPECT_EQ(counters.pushes, 2u);
  EXPECT_EQ(counters.lines, 3u);
  EXPECT_EQ(counters.malformed_lines, 1u);
}

TEST_F(ListenerFeedPushEndpoint, TheQueryNamesTheStreamBeforeTheHeaderAndTheBody) {
  EXPECT_EQ(Push(Lines({tl::AppStart("app-a", 1)}), "app=from-query", "from-header").status, 200);
  EXPECT_EQ(Push(Lines({tl::AppStart("app-a", 1)}), "", "from-header").status, 200);
  const std::vector<PushedBatch> batches = endpoint_.TakeAll();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].stream, "from-query");
  EXPECT_EQ(batches[1].stream, "from-header");
}

TEST_F(ListenerFeedPushEndpoint, RefusesWhatItCannotPlace) {
  const PushReply unnamed = Push(Lines({tl::JobEnd(1, 1200)}));
  EXPECT_EQ(unnamed.status, 400);
  EXPECT_NE(unnamed.body.find("?app="), std::string::npos) << unnamed.body;
  EXPECT_EQ(Push(Lines({tl::JobEnd(1, 1200)}), "app=bad%20name").status, 400);
  EXPECT_EQ(Push(Lines({tl::JobEnd(1, 1200)}), "", "").status, 400);
  EXPECT_EQ(Push(std::string(4097, '\n'), "app=x").status, 413);
  PushRequest gzip;
  gzip.query = "app=x";
  gzip.content_encoding = "gzip";
  gzip.body = "x";
  EXPECT_EQ(endpoint_.Push(gzip).status, 415);
  // Nothing to apply needs no application: an all-malformed body is still counted.
  const PushReply malformed = Push("nope\n");
  EXPECT_EQ(malformed.status, 200);
  EXPECT_EQ(malformed.body, "{\"accepted\":0,\"malformed\":1}\n");
  EXPECT_TRUE(endpoint_.TakeAll().empty());
  const EventPushCounters counters = endpoint_.counters();
  EXPECT_EQ(counters.rejected_bad_request, 4u);
  EXPECT_EQ(counters.rejected_too_large, 1u);
  EXPECT_EQ(wakeups_, 0);
}

TEST_F(ListenerFeedPushEndpoint, AFullQueueAnswers503WithRetryAfterUntilTheFeedTakesIt) {
  const std::string body = Lines({tl::JobEnd(1, 1200)});
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Push(body, "app=x").status, 200);
  const PushReply busy = Push(body, "app=x");
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.retry_after_seconds, 1);
  EXPECT_EQ(endpoint_.TakeAll().size(), 3u);
  EXPECT_EQ(Push(body, "app=x").status, 200);
  // By bytes: bodies not yet applied may not exceed max_queued_bytes (one may, alone).
  std::string big = Lines({tl::JobEnd(2, 1300)});
  big.resize(4000, '\n');
  EXPECT_EQ(Push(big, "app=x").status, 200);
  EXPECT_EQ(Push(big, "app=x").status, 503);
  EXPECT_EQ(endpoint_.counters().rejected_busy, 2u);
}

TEST_F(ListenerFeedPushEndpoint, RefusesEverythingOnceClosed) {
  endpoint_.Close();
  const PushReply reply = Push(Lines({tl::AppStart("app-7", 1000)}));
  EXPECT_EQ(reply.status, 503);
  EXPECT_TRUE(reply.retry_after_seconds.has_value());
  EXPECT_TRUE(endpoint_.TakeAll().empty());
  EXPECT_EQ(wakeups_, 0);
}

}  // namespace
}  // namespace sparktrace::feed
