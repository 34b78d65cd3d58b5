#include "tracing/store/span_rows/shared/shared_attributes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/span_rows/compact_attributes.h"

namespace sparktrace::tracing::store {
namespace {

using testing_spans::ConfigCallAttributes;
using testing_spans::ExpectAttributesEq;

// A set source over a map, counting what it was asked.
class MapSetSource final : public AttributeSetSource {
 public:
  Result<std::string> AttributeSetBytes(std::uint64_t set_id) override {
    ++asked;
    const auto found = sets.find(set_id);
    if (found == sets.end()) return Error{ErrorCode::kNotFound, "no such set"};
    return found->second;
  }
  std::map<std::uint64_t, std::string> sets;
  int asked = 0;
};

std::optional<std::string> SetOf(const std::vector<Attribute>& attributes) {
  std::string set = "left from the span before";
  std::string own = "left too";
  if (!SplitSharedAttributes(attributes, set, own)) return std::nullopt;
  return set;
}

std::string SharedRow(std::uint64_t set_id, const std::vector<Attribute>& attributes) {
  std::string set;
  std::string own;
  EXPECT_TRUE(SplitSharedAttributes(attributes, set, own));
  std::string row;
  AppendSharedAttributes(row, set_id, own);
  return row;
}

TEST(SharedAttributesTest, TwoCallsOfASessionShareOneSetAndReadBackExactly) {
  const auto first = ConfigCallAttributes(41234, 0.38);
  const auto second = ConfigCallAttributes(41234, 2.5);
  const auto set = SetOf(first);
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(SetOf(second), set);  // only their own attributes differ
  MapSetSource sets;
  sets.sets[7] = *set;
  for (const auto& attributes : {first, second}) {
    const std::string row = SharedRow(7, attributes);
    std::string compact;
    AppendCompactAttributes(compact, attributes);
    EXPECT_LT(row.size() + 40, compact.size()) << "the shared row keeps the session's attributes out";
    EXPECT_EQ(SharedAttributesSetId(row), 7U);
    auto read = ReadCompactOrSharedAttributes(row, &sets);
    ASSERT_TRUE(read.ok()) << read.error().ToString();
    ExpectAttributesEq(*read, attributes);
  }
}

TEST(SharedAttributesTest, ASetKeepsItsAttributesPositionsWhereverTheyAre) {
  // Shareable first, last and together; the set differs with the positions.
  const std::vector<Attribute> attributes = {{"spark.connect.session_id", std::string("s-1")},
                                             {"own.one", std::int64_t{1}},
                                             {"own.two", true},
                                             {"airflow.dag_id", std::string("etl")},
                                             {"airflow.task_id", std::string("load")},
                                             {"own.three", std::vector<std::string>{"a", "b"}},
                                             {"airflow.try_number", std::int64_t{2}}};
  const auto set = SetOf(attributes);
  ASSERT_TRUE(set.has_value());
  std::vector<Attribute> moved = attributes;
  std::swap(moved[0], moved[1]);
  EXPECT_NE(SetOf(moved), set);
  MapSetSource sets;
  sets.sets[1] = *set;
  sets.sets[2] = *SetOf(moved);
  auto read = ReadCompactOrSharedAttributes(SharedRow(1, attributes), &sets);
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  ExpectAttributesEq(*read, attributes);
  auto read_moved = ReadCompactOrSharedAttributes(SharedRow(2, moved), &sets);
  ASSERT_TRUE(read_moved.ok());
  ExpectAttributesEq(*read_moved, moved);
}

TEST(SharedAttributesTest, SpansThatShareLittleOrRepeatAKeyKeepTheCompactForm) {
  EXPECT_FALSE(SetOf({}).has_value());
  EXPECT_FALSE(SetOf({{"rpc.method", std::string("Config")}, {"rpc.system", std::string("grpc")}}));
  EXPECT_FALSE(SetOf({{"rpc.system", std::string("grpc")},
                      {"rpc.service", std::string("a")},
                      {"rpc.system", std::string("other")}}));
  EXPECT_TRUE(SetOf({{"rpc.system", std::string("grpc")}, {"rpc.service", std::string("a")}}));
  // airflow.map_index is read in SQL from every Airflow span: it stays in the row's own part.
  EXPECT_FALSE(SetOf({{"airflow.map_index", std::int64_t{3}}, {"airflow.dag_id", std::string("etl")}}));

  // A compact row reads as before, with no set source at all.
  std::string compact;
  const std::vector<Attribute> plain = {{"rpc.method", std::string("Config")}};
  AppendCompactAttributes(compact, plain);
  auto read = ReadCompactOrSharedAttributes(compact, nullptr);
  ASSERT_TRUE(read.ok());
  ExpectAttributesEq(*read, plain);
  EXPECT_FALSE(SharedAttributesSetId(compact).has_value());
}

TEST(SharedAttributesTest, FindsAnOwnKeyWithoutTheSetAndASharedKeyInIt) {
  const auto call = ConfigCallAttributes(41234, 0.38);
  MapSetSource sets;
  sets.sets[3] = *SetOf(call);
  const std::string row = SharedRow(3, call);

  auto own = FindCompactOrSharedAttribute(row, "rpc.method", &sets);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(*own, AttributeValue(std::string("Config")));
  EXPECT_EQ(sets.asked, 0);

  auto shared = FindCompactOrSharedAttribute(row, "spark.connect.session_id", &sets);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(*shared, AttributeValue(std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70")));
  EXPECT_EQ(sets.asked, 1);

  auto absent = FindCompactOrSharedAttribute(row, "airflow.dag_id", &sets);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  auto absent_own = FindCompactOrSharedAttribute(row, "no.such.key", &sets);
  ASSERT_TRUE(absent_own.ok());
  EXPECT_FALSE(absent_own->has_value());
}

TEST(SharedAttributesTest, AMissingOrMalformedSetIsAnErrorNotOtherAttributes) {
  const auto call = ConfigCallAttributes(41234, 0.38);
  const std::string row = SharedRow(9, call);
  MapSetSource sets;
  auto missing = ReadCompactOrSharedAttributes(row, &sets);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(ReadCompactOrSharedAttributes(row, nullptr).ok());

  // A set naming a position past the row's attributes, and one whose positions go back.
  std::string past(1, static_cast<char>(kAttributeSetFormat));
  AppendCompactVarint(past, 40);
  AppendCompactAttribute(past, {"rpc.system", std::string("grpc")});
  sets.sets[9] = past;
  auto read_past = ReadCompactOrSharedAttributes(row, &sets);
  ASSERT_FALSE(read_past.ok());
  EXPECT_EQ(read_past.error().code, ErrorCode::kInternal);

  std::string back(1, static_cast<char>(kAttributeSetFormat));
  AppendCompactVarint(back, 1);
  AppendCompactAttribute(back, {"rpc.system", std::string("grpc")});
  AppendCompactVarint(back, 0);
  AppendCompactAttribute(back, {"rpc.service", std::string("s")});
  sets.sets[9] = back;
  EXPECT_FALSE(ReadCompactOrSharedAttributes(row, &sets).ok());
  EXPECT_FALSE(FindCompactOrSharedAttribute(row, "rpc.service", &sets).ok());

  // A truncated row.
  EXPECT_FALSE(ReadCompactOrSharedAttributes(row.substr(0, 1), &sets).ok());
}

// The splitter a writer keeps gives, span after span, what SplitSharedAttributes gives each span alone:
// when a span repeats the keys or the set before it (kept, not looked up or encoded again) and
// whenever it does not (a value, a position, a key more, less or renamed, a double's sign or a NaN,
// the compact form and back).
TEST(SharedAttributesTest, TheWritersSplitterGivesWhatEachSpanAloneWould) {
  const auto call = ConfigCallAttributes(41234, 0.38);
  std::vector<std::vector<Attribute>> spans = {call, ConfigCallAttributes(41234, 2.5), call};
  std::vector<Attribute> other_value = call;
  for (Attribute& attribute : other_value) {
    if (attribute.key == "spark.connect.session_id") attribute.value = std::string("another session");
  }
  spans.push_back(other_value);
  spans.push_back(call);
  std::vector<Attribute> moved = call;
  std::rotate(moved.begin(), moved.begin() + 1, moved.end());
  spans.push_back(moved);
  std::vector<Attribute> one_more = call;
  one_more.push_back({"airflow.dag_id", std::string("etl")});
  spans.push_back(one_more);
  spans.push_back(call);
  spans.push_back(one_more);
  const std::vector<Attribute> little = {{"airflow.dag_id", std::string("etl")}, {"own", std::int64_t{1}}};
  spans.push_back(little);
  spans.push_back(little);
  spans.push_back(call);
  // A double under a shareable key: 0.0 and -0.0 are equal, but encode apart; a NaN equals nothing.
  for (const double value : {0.0, -0.0, -0.0, std::nan(""), std::nan("")}) {
    std::vector<Attribute> with_double = call;
    with_double.push_back({"airflow.try_number", value});
    spans.push_back(with_double);
  }
  std::vector<Attribute> repeated = call;
  repeated.push_back(repeated.front());
  spans.push_back(repeated);
  spans.push_back(call);
  // The same number of keys, one of them another: an own key become shareable, then one without a code.
  for (const char* key : {"airflow.dag_id", "an.own.key.without.a.code"}) {
    std::vector<Attribute> renamed = call;
    renamed[2].key = key;  // was rpc.method
    spans.push_back(renamed);
    spans.push_back(renamed);
  }
  spans.push_back(call);

  SharedAttributeSplitter splitter;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    std::string set;
    std::string own;
    const bool shared = SplitSharedAttributes(spans[i], set, own);
    ASSERT_EQ(splitter.Split(spans[i]), shared) << "span " << i;
    if (!shared) continue;
    EXPECT_EQ(splitter.set(), set) << "span " << i;
    EXPECT_EQ(splitter.own(), own) << "span " << i;
  }
}

}  // namespace
}  // namespace sparktrace::tracing::store
