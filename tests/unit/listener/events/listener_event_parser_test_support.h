#pragma once
// Shared by the EventParser tests on hand-written lines: a Spark Connect operation's tag and id, a
// Connect event line, and parsing a line expecting an event of one type or an error.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <variant>

#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::events {

inline constexpr std::string_view kConnectPackage = "org.apache.spark.sql.connect.service.";
inline constexpr std::string_view kTag =
    "SparkConnect_OperationTag_User_data_eng_Session_8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f_Operation_"
    "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59";
inline constexpr std::string_view kOperationId = "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59";

template <typename Event>
inline Event ParseAs(std::string_view line) {
  EventParser parser;
  Result<SparkEvent> result = parser.Parse(line);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().ToString()) << "\n" << line;
  if (!result.ok()) return Event{};
  const Event* event = std::get_if<Event>(&*result);
  EXPECT_NE(event, nullptr) << "parsed as " << SparkEventName(*result) << "\n" << line;
  return event != nullptr ? *event : Event{};
}

inline std::string ErrorOf(std::string_view line) {
  EventParser parser;
  Result<SparkEvent> result = parser.Parse(line);
  EXPECT_FALSE(result.ok()) << "parsed as " << (result.ok() ? SparkEventName(*result) : "") << ": " << line;
  return result.ok() ? std::string() : result.error().message;
}

inline std::string ConnectLine(std::string_view event, std::string_view fields) {
  return "{\"Event\":\"" + std::string(kConnectPackage) + std::string(event) + "\"," + std::string(fields) +
         "}";
}

}  // namespace sparktrace::listener::events
