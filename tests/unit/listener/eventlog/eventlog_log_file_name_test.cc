#include <gtest/gtest.h>

#include "listener/eventlog/log_file_name.h"

namespace sparktrace::listener::eventlog {
namespace {

TEST(EventLogFileName, SingleFileNamesCarryCodecAndProgress) {
  const auto live = ParseSingleFileLogName("local-1642039451826.zstd.inprogress");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->base, "local-1642039451826");
  EXPECT_EQ(live->final_name, "local-1642039451826.zstd");
  EXPECT_EQ(live->codec, Codec::kZstd);
  EXPECT_TRUE(live->in_progress);

  const auto plain = ParseSingleFileLogName("application_1656321732247_0006_1");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->base, "application_1656321732247_0006_1");
  EXPECT_EQ(plain->codec, Codec::kNone);
  EXPECT_FALSE(plain->in_progress);

  EXPECT_EQ(ParseSingleFileLogName("app.lz4")->codec, Codec::kLz4);
  EXPECT_EQ(ParseSingleFileLogName("app.snappy")->codec, Codec::kSnappy);
  EXPECT_EQ(ParseSingleFileLogName("app.zst")->codec, Codec::kZstd);
  EXPECT_EQ(ParseSingleFileLogName("app.lzf.inprogress")->codec, Codec::kLzf);
  const auto unknown = ParseSingleFileLogName("eventlog-2021-06-15--15-00.gz");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->codec, Codec::kUnknown);
  EXPECT_EQ(unknown->codec_suffix, "gz");
  EXPECT_EQ(ParseSingleFileLogName("app.inprogress")->codec, Codec::kNone);
  EXPECT_FALSE(ParseSingleFileLogName(".inprogress"));
  EXPECT_FALSE(ParseSingleFileLogName(""));
}

TEST(EventLogFileName, RollingDirectoryAndFiles) {
  EXPECT_EQ(ParseRollingDirectoryName("eventlog_v2_application_1628109047826_1317105"),
            "application_1628109047826_1317105");
  EXPECT_FALSE(ParseRollingDirectoryName("eventlog_v2_"));
  EXPECT_FALSE(ParseRollingDirectoryName("multiple_attempts"));

  const std::string base = "application_1628109047826_1317105";
  const auto first = ParseRollingEventFileName("events_1_application_1628109047826_1317105.zstd", base);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->index, 1u);
  EXPECT_EQ(first->codec, Codec::kZstd);
  EXPECT_FALSE(first->compacted);

  const auto plain = ParseRollingEventFileName("events_12_" + base, base);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->index, 12u);
  EXPECT_EQ(plain->codec, Codec::kNone);

  const auto compacted = ParseRollingEventFileName("events_3_" + base + ".lz4.compact", base);
  ASSERT_TRUE(compacted);
  EXPECT_TRUE(compacted->compacted);
  EXPECT_EQ(compacted->codec, Codec::kLz4);

  EXPECT_FALSE(ParseRollingEventFileName("events_0_" + base, base));
  EXPECT_FALSE(ParseRollingEventFileName("events_x_" + base, base));
  EXPECT_FALSE(ParseRollingEventFileName("events_1_other", base));
  EXPECT_FALSE(ParseRollingEventFileName("events_1_" + base + "_2", base));
  EXPECT_FALSE(ParseRollingEventFileName("events_1_" + base + ".", base));
  EXPECT_FALSE(ParseRollingEventFileName("appstatus_" + base, base));
}

TEST(EventLogFileName, AppStatusMarker) {
  EXPECT_EQ(ParseAppStatusFileName("appstatus_app-1.inprogress", "app-1"), AppStatusMarker::kInProgress);
  EXPECT_EQ(ParseAppStatusFileName("appstatus_app-1", "app-1"), AppStatusMarker::kComplete);
  EXPECT_FALSE(ParseAppStatusFileName("appstatus_app-2", "app-1"));
  EXPECT_FALSE(ParseAppStatusFileName("events_1_app-1", "app-1"));
}

}  // namespace
}  // namespace sparktrace::listener::eventlog
