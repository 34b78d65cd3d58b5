// The span vocabulary lives in one header (tracing/span_vocabulary.h). This test walks the C++
// sources (*.cc, *.h outside tests/, build*/ and the header itself) and fails, naming file:line,
// for any quoted string literal in code (comments are skipped) that starts with "spark.",
// "airflow.", "finding.", "spark_connect." (the proxy's operation span) or "rpc." (the RPC span's
// OpenTelemetry keys): such a literal is a span name,
// attribute key or event key spelled by hand, which a producer and a reader can then spell differently.
//
// The one exception is Spark's own vocabulary: its configuration keys ("spark.executor.memory",
// "spark.sql.shuffle.partitions") and the job properties its listener events carry
// ("spark.job.tags", "spark.sql.execution.id"). Those are Spark's names, not ours, and live where
// Spark's configuration is read, written or recommended: the files and directories in
// kSparkOwnNames below. A span key added to one of those places is not caught; everywhere else
// any spark./airflow./finding./rpc. literal is.
//
// The driver's phase names ("resource_wait", "io_write": the two no other word of the code shares)
// are the vocabulary's too (tracing::SparkPhase), checked everywhere outside kPhaseNamesPending.

#include "tracing/span_vocabulary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace sparktrace::tracing {
namespace {

namespace fs = std::filesystem;

// Relative to the repository root; a trailing '/' names a directory.
constexpr std::array<std::string_view, 9> kSparkOwnNames = {
    "listener/events/",                         // reads Spark's event logs: properties and configuration
    "listener/correlate/resource_settings.cc",  // sizes executors from Spark's configuration
    "listener/correlate/application_model.cc",  // keeps Spark's configuration (spark.hadoop.*)
    "diagnose/",                                // rules read and recommend Spark configuration
    "sim/",                                     // writes Spark event logs
    "feed/application_figures.cc",              // reads spark.executor.memory
    "cli/demo/workload.cc",                     // sets a Spark session configuration
    "tracing/span_vocabulary.h",                // the vocabulary itself
    // A frozen copy of the vocabulary's keys: stored rows hold their codes, so a renamed constant
    // must not change what an old code reads back as.
    "tracing/store/span_rows/compact_attribute_dictionary.cc",
};

// Files that still spell a phase name, each with the change that takes it away (the task index's
// own phase enum went with the store rooms: it is tracing::SparkPhase now).
constexpr std::array<std::string_view, 1> kPhaseNamesPending = {
    "tracing/span_vocabulary.h",  // the vocabulary itself
};

fs::path RepositoryRoot() {
  // This file is <root>/tests/unit/tracing/span_vocabulary_test.cc.
  return (fs::path(__FILE__).parent_path() / ".." / ".." / "..").lexically_normal();
}

template <std::size_t N>
bool Exempt(std::string_view relative, const std::array<std::string_view, N>& exempt) {
  return std::any_of(exempt.begin(), exempt.end(), [relative](std::string_view name) {
    return name.ends_with('/') ? relative.starts_with(name) : relative == name;
  });
}

bool Skipped(const fs::path& relative) {
  const std::string top = relative.begin()->string();
  return top == "tests" || top.starts_with("build") || top.starts_with(".");
}

// The line without its comment: "//" outside a string or character literal, and the inside of
// /* */ blocks (`in_block` carries one across lines).
std::string CodeOf(const std::string& line, bool& in_block) {
  std::string code;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const char next = i + 1 < line.size() ? line[i + 1] : '\0';
    if (in_block) {
      if (c == '*' && next == '/') {
        in_block = false;
        ++i;
      }
      continue;
    }
    if (quote != 0) {
      code += c;
      if (c == '\\' && next != '\0') {
        code += next;
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '/' && next == '/') break;
    if (c == '/' && next == '*') {
      in_block = true;
      ++i;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    code += c;
  }
  return code;
}

// "file:line: literal" for each literal matching `literal` spelled outside the `exempt` files.
template <std::size_t N>
std::vector<std::string> StrayLiterals(const fs::path& root, const std::regex& literal,
                                       const std::array<std::string_view, N>& exempt) {
  std::vector<std::string> stray;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path relative = it->path().lexically_relative(root);
    if (it->is_directory()) {
      if (Skipped(relative)) it.disable_recursion_pending();
      continue;
    }
    const std::string extension = it->path().extension().string();
    if (extension != ".cc" && extension != ".h") continue;
    if (Skipped(relative) || Exempt(relative.generic_string(), exempt)) continue;
    std::ifstream in(it->path());
    std::string line;
    bool in_block = false;
    for (int number = 1; std::getline(in, line); ++number) {
      const std::string code = CodeOf(line, in_block);
      for (auto match = std::sregex_iterator(code.begin(), code.end(), literal);
           match != std::sregex_iterator(); ++match) {
        stray.push_back(relative.generic_string() + ":" + std::to_string(number) + ": " + (*match)[0].str());
      }
    }
  }
  std::sort(stray.begin(), stray.end());
  return stray;
}

TEST(SpanVocabularyTest, NoSpanKeyIsSpelledOutsideTheVocabularyHeader) {
  const fs::path root = RepositoryRoot();
  ASSERT_TRUE(fs::exists(root / "tracing" / "span_vocabulary.h")) << root;
  static const std::regex kKey(R"re("((spark|airflow|finding|spark_connect|rpc)\.[^"\\]*)")re");
  std::string listing;
  for (const std::string& entry : StrayLiterals(root, kKey, kSparkOwnNames)) listing += "\n  " + entry;
  EXPECT_TRUE(listing.empty())
      << "quoted span vocabulary outside tracing/span_vocabulary.h (use its constants):" << listing;
}

TEST(SpanVocabularyTest, NoPhaseNameIsSpelledOutsideTheVocabularyHeader) {
  const fs::path root = RepositoryRoot();
  static const std::regex kPhaseName(R"re("(resource_wait|io_write)")re");
  std::string listing;
  for (const std::string& entry : StrayLiterals(root, kPhaseName, kPhaseNamesPending)) {
    listing += "\n  " + entry;
  }
  EXPECT_TRUE(listing.empty()) << "a phase name spelled outside tracing/span_vocabulary.h (use SparkPhase):"
                               << listing;
}

TEST(SpanVocabularyTest, EachPhaseHasOneNameAndIsFoundByIt) {
  EXPECT_EQ(kSparkPhaseNames,
            (std::array<std::string_view, kSparkPhaseCount>{"resource_wait", "compute", "io_write", "idle"}));
  for (std::size_t index = 0; index < kSparkPhaseCount; ++index) {
    const SparkPhase phase = kSparkPhases[index];
    EXPECT_EQ(static_cast<std::size_t>(phase), index);
    EXPECT_EQ(SparkPhaseNamed(SparkPhaseName(phase)), phase) << SparkPhaseName(phase);
  }
  EXPECT_EQ(SparkPhaseNamed("client"), std::nullopt);  // the trace view's, not the driver's
  EXPECT_EQ(SparkPhaseNamed(""), std::nullopt);
}

TEST(SpanVocabularyTest, CommentsAreNotCode) {
  bool in_block = false;
  EXPECT_EQ(CodeOf(R"(f("a//b"); // "spark.job")", in_block), R"(f("a//b"); )");
  EXPECT_EQ(CodeOf(R"(x = '"'; /* "spark.job" */ y)", in_block), R"(x = '"';  y)");
  EXPECT_EQ(CodeOf(R"(/* "spark.job")", in_block), "");
  EXPECT_TRUE(in_block);
  EXPECT_EQ(CodeOf(R"("airflow.task" */ z)", in_block), " z");
  EXPECT_FALSE(in_block);
}

TEST(SpanVocabularyTest, TheHeaderHoldsTheKeysTheSpansCarry) {
  EXPECT_EQ(kSparkConnectLifecycleSpanName, "spark.connect.operation.lifecycle");
  EXPECT_EQ(kAirflowTaskSpanName, "airflow.task");
  EXPECT_EQ(kFindingEventName, "sparktrace.finding");
  EXPECT_EQ(kRpcMethodKey, "rpc.method");
  EXPECT_EQ(kRpcGrpcStatusCodeKey, "rpc.grpc.status_code");
}

}  // namespace
}  // namespace sparktrace::tracing
