#include "tracing/store/span_rows/compact_attributes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "common/json_writer.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/attribute_json.h"
#include "tracing/store/span_rows/attribute_json_reader.h"
#include "tracing/store/span_rows/compact_attribute_dictionary.h"

namespace sparktrace::tracing::store {
namespace {

// Attribute has no operator==; kinds and values must both match (3 is not 3.0).
testing::AssertionResult SameCompactTestAttributes(const std::vector<Attribute>& actual,
                                                   const std::vector<Attribute>& expected) {
  if (actual.size() != expected.size())
    return testing::AssertionFailure() << actual.size() << " attributes, expected " << expected.size();
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (actual[i].key != expected[i].key || actual[i].value != expected[i].value)
      return testing::AssertionFailure() << "attribute " << i << " (" << expected[i].key << ") differs";
  }
  return testing::AssertionSuccess();
}

std::string CompactOf(const std::vector<Attribute>& attributes) {
  std::string bytes;
  AppendCompactAttributes(bytes, attributes);
  return bytes;
}

std::vector<Attribute> ThroughJson(const std::vector<Attribute>& attributes) {
  JsonWriter out;
  WriteAttributesJson(out, attributes);
  std::vector<Attribute> read;
  EXPECT_TRUE(ReadAttributesJson(out.Take(), read));
  return read;
}

TEST(CompactAttributesTest, ReadsBackWhatTheJsonFormReadsBack) {
  const std::vector<Attribute> attributes = {
      {"rpc.method", std::string("ExecutePlan")},         // key and value from the dictionaries
      {"my.own.key", std::string("free text \xc3\xa9")},  // neither
      {"airflow.try_number", std::int64_t{3}},
      {"negative", std::int64_t{-42}},
      {"smallest", std::numeric_limits<std::int64_t>::min()},
      {"largest", std::numeric_limits<std::int64_t>::max()},
      {"ratio", 0.25},
      {"whole double", 3.0},  // stays a double, as "3.0" in JSON
      {"flag", true},
      {"off", false},
      {"spark.sql.job_ids", std::vector<std::string>{"1", "2", "three"}},
      {"empty list", std::vector<std::string>{}},
      {"empty", std::string()},
      {"uuid", std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70")},
      {"upper uuid", std::string("3F1C2A9E-8B7D-4C6E-9A1F-2B3C4D5E6F70")},  // not canonical: kept as text
      {"almost uuid", std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f7g")},
  };
  std::vector<Attribute> read;
  ASSERT_TRUE(ReadCompactAttributes(CompactOf(attributes), read));
  EXPECT_TRUE(SameCompactTestAttributes(read, attributes));
  EXPECT_TRUE(SameCompactTestAttributes(ThroughJson(attributes), attributes));
}

TEST(CompactAttributesTest, KeepsTheJsonFormsRuleForARepeatedKey) {
  // First position, last value: what WriteAttributesJson does.
  const std::vector<Attribute> attributes = {{"a", std::int64_t{1}},  {"b", std::string("x")},
                                             {"a", std::int64_t{2}},  {"c", true},
                                             {"b", std::string("y")}, {"a", std::int64_t{3}}};
  std::vector<Attribute> read;
  ASSERT_TRUE(ReadCompactAttributes(CompactOf(attributes), read));
  const std::vector<Attribute> expected = {{"a", std::int64_t{3}}, {"b", std::string("y")}, {"c", true}};
  EXPECT_TRUE(SameCompactTestAttributes(read, expected));
  EXPECT_TRUE(SameCompactTestAttributes(ThroughJson(attributes), expected));

  // The same with keys from the dictionary (their repeat is found by code).
  const std::vector<Attribute> vocabulary = {{"rpc.method", std::string("Config")},
                                             {"rpc.system", std::string("grpc")},
                                             {"rpc.method", std::string("ExecutePlan")}};
  ASSERT_TRUE(ReadCompactAttributes(CompactOf(vocabulary), read));
  const std::vector<Attribute> vocabulary_expected = {{"rpc.method", std::string("ExecutePlan")},
                                                      {"rpc.system", std::string("grpc")}};
  EXPECT_TRUE(SameCompactTestAttributes(read, vocabulary_expected));
  EXPECT_TRUE(SameCompactTestAttributes(ThroughJson(vocabulary), vocabulary_expected));
}

TEST(CompactAttributesTest, ManyAttributesWithRepeatsKeepTheirOrder) {
  std::vector<Attribute> attributes;
  std::vector<Attribute> expected;
  for (std::int64_t i = 0; i < 2000; ++i) {
    attributes.push_back({"key." + std::to_string(i % 1000), i});
    if (i < 1000) expected.push_back({"key." + std::to_string(i), i + 1000});
  }
  std::vector<Attribute> read;
  ASSERT_TRUE(ReadCompactAttributes(CompactOf(attributes), read));
  EXPECT_TRUE(SameCompactTestAttributes(read, expected));
  EXPECT_TRUE(SameCompactTestAttributes(ThroughJson(attributes), expected));
}

TEST(CompactAttributesTest, KeepsNonFiniteAsNanAndAnyBytes) {
  const std::vector<Attribute> attributes = {{"nan", std::numeric_limits<double>::quiet_NaN()},
                                             {"infinity", std::numeric_limits<double>::infinity()},
                                             {"subnormal", 5e-324},
                                             {"bytes", std::string("a\0b\xff", 4)}};
  std::vector<Attribute> read;
  ASSERT_TRUE(ReadCompactAttributes(CompactOf(attributes), read));
  ASSERT_EQ(read.size(), 4u);
  EXPECT_TRUE(std::isnan(std::get<double>(read[0].value)));
  EXPECT_TRUE(std::isnan(std::get<double>(read[1].value)));  // as the JSON form's null
  EXPECT_EQ(std::get<double>(read[2].value), 5e-324);
  EXPECT_EQ(std::get<std::string>(read[3].value), std::string("a\0b\xff", 4));
}

TEST(CompactAttributesTest, AConfigCallTakesAQuarterOfItsJson) {
  const std::vector<Attribute> attributes = testing_spans::ConfigCallAttributes();
  JsonWriter json;
  WriteAttributesJson(json, attributes);
  const std::string compact = CompactOf(attributes);
  EXPECT_LE(compact.size() * 4, json.Take().size());
  std::vector<Attribute> read;
  ASSERT_TRUE(ReadCompactAttributes(compact, read));
  EXPECT_TRUE(SameCompactTestAttributes(read, attributes));
}

TEST(CompactAttributesTest, FindsOneAttributeWithoutDecodingTheOthers) {
  const std::string bytes = CompactOf(testing_spans::ConfigCallAttributes());
  EXPECT_EQ(FindCompactAttribute(bytes, "rpc.method"), AttributeValue(std::string("Config")));
  EXPECT_EQ(FindCompactAttribute(bytes, "server.port"), AttributeValue(std::int64_t{15002}));
  EXPECT_EQ(FindCompactAttribute(bytes, "spark.connect.config.operation"),
            AttributeValue(std::string("get")));
  EXPECT_EQ(FindCompactAttribute(bytes, "airflow.map_index"), std::nullopt);
  EXPECT_EQ(FindCompactAttribute(CompactOf({}), "rpc.method"), std::nullopt);
}

TEST(CompactAttributesTest, RefusesBytesThatAreNotTheCompactForm) {
  std::vector<Attribute> read = {{"untouched", true}};
  const std::string good = CompactOf(testing_spans::ConfigCallAttributes());
  EXPECT_FALSE(ReadCompactAttributes("", read));
  EXPECT_FALSE(ReadCompactAttributes("{\"a\":1}", read));  // JSON text
  for (std::size_t cut = 1; cut < good.size(); ++cut) {
    std::vector<Attribute> partial;
    // Every prefix either fails or ends exactly between two attributes.
    if (ReadCompactAttributes(good.substr(0, cut), partial)) {
      EXPECT_LT(partial.size(), testing_spans::ConfigCallAttributes().size()) << cut;
    }
  }
  std::string unknown_kind = CompactOf({{"k", true}});
  unknown_kind.back() = static_cast<char>(0x7f);
  EXPECT_FALSE(ReadCompactAttributes(unknown_kind, read));
  std::string unknown_key = good.substr(0, 1) + "\xff\x7f";  // a key code past the dictionary
  EXPECT_FALSE(ReadCompactAttributes(unknown_key, read));
  EXPECT_TRUE(SameCompactTestAttributes(read, {{"untouched", true}}));
  EXPECT_EQ(FindCompactAttribute(unknown_kind, "zzz"), std::nullopt);
}

TEST(CompactAttributesTest, DictionaryCodesAreUniqueAndRoundTrip) {
  std::set<std::string_view> keys;
  for (std::uint64_t code = 1; const auto key = CompactKeyOfCode(code); ++code) {
    EXPECT_TRUE(keys.insert(*key).second) << *key;
    EXPECT_EQ(CompactKeyCode(*key), code);
  }
  EXPECT_GT(keys.size(), 100u);
  EXPECT_EQ(CompactKeyOfCode(0), std::nullopt);
  std::set<std::string_view> values;
  for (std::uint64_t code = 0; const auto value = CompactValueOfCode(code); ++code) {
    EXPECT_TRUE(values.insert(*value).second) << *value;
    EXPECT_EQ(CompactValueCode(*value), code);
  }
  // Stored rows depend on these: the first entries never move.
  EXPECT_EQ(CompactKeyOfCode(1), "airflow.dag_id");
  EXPECT_EQ(CompactValueOfCode(0), "grpc");
}

// The dictionaries' lookup table answers only for its own entries: a text next to an entry (one byte
// changed, one short, one long, the same first and last eight bytes around another middle) or empty
// is spelt out, or is another entry spelt exactly so.
TEST(CompactAttributesTest, DictionaryLookupFindsOnlyItsEntries) {
  const auto check = [](auto code_of, auto entry_of, std::uint64_t first) {
    for (std::uint64_t code = first; const auto entry = entry_of(code); ++code) {
      const std::string text(*entry);
      std::vector<std::string> near = {text + "x", text.substr(0, text.size() - 1), "", text};
      near.back().back() = static_cast<char>(near.back().back() ^ 1);
      if (text.size() > 16) near.push_back(text.substr(0, 8) + "?" + text.substr(text.size() - 8));
      for (const std::string& probe : near) {
        const auto found = code_of(probe);
        if (found) {
          EXPECT_EQ(entry_of(*found), probe) << "probe " << probe << " near " << text;
        }
      }
    }
  };
  check(CompactKeyCode, CompactKeyOfCode, 1);
  check(CompactValueCode, CompactValueOfCode, 0);
}

// Past the pairwise check (32 attributes), unique keys are found unique through sorting, and written
// in their order.
TEST(CompactAttributesTest, ManyUniqueAttributesKeepTheirOrder) {
  std::vector<Attribute> attributes;
  for (std::int64_t i = 0; i < 100; ++i) attributes.push_back({"key." + std::to_string(99 - i), i});
  EXPECT_TRUE(KeysAreUnique(attributes));
  std::vector<Attribute> read;
  ASSERT_TRUE(ReadCompactAttributes(CompactOf(attributes), read));
  EXPECT_TRUE(SameCompactTestAttributes(read, attributes));
  attributes.push_back({"key.7", std::int64_t{-1}});
  EXPECT_FALSE(KeysAreUnique(attributes));
}

// FNV-1a over the first `count` entries, each followed by a newline.
template <typename EntryOfCode>
std::uint64_t DictionaryFingerprint(EntryOfCode entry_of_code, std::uint64_t first, std::uint64_t count) {
  std::uint64_t hash = 1469598103934665603ULL;
  const auto add = [&hash](unsigned char byte) {
    hash ^= byte;
    hash *= 1099511628211ULL;
  };
  for (std::uint64_t code = first; code < first + count; ++code) {
    const auto entry = entry_of_code(code);
    if (!entry) return 0;  // fewer entries than when the fingerprint was taken
    for (const char c : *entry) add(static_cast<unsigned char>(c));
    add('\n');
  }
  return hash;
}

// Every code stored rows hold today (schema 7: 153 keys, 48 values) keeps its meaning: an entry
// removed, moved or respelt changes these fingerprints; an entry appended does not.
TEST(CompactAttributesTest, TheDictionariesOfSchemaSevenNeverChange) {
  EXPECT_EQ(DictionaryFingerprint(CompactKeyOfCode, 1, 153), 0xe6d6f656ce398d43ULL);
  EXPECT_EQ(DictionaryFingerprint(CompactValueOfCode, 0, 48), 0x12f36cca8262d1e2ULL);
}

}  // namespace
}  // namespace sparktrace::tracing::store
