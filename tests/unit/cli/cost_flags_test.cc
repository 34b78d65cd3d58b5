// The price flags (cli/cost_flags.h): parsed into prices, and a malformed value stops `sparktrace ui`
// with exit 2 naming the flag before anything is opened.

#include "cli/cost_flags.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/ui_command.h"

namespace sparktrace::cli {
namespace {

Result<diagnose::cost::CostPrices> PricesOf(std::vector<std::string> args) {
  auto flags = ParseFlags(CostFlagSpecs(), args, [](const std::string&) { return std::nullopt; });
  if (!flags.ok()) return flags.error();
  return CostPricesFromFlags(*flags);
}

TEST(CostFlags, UnsetMeansNoPrices) {
  auto prices = PricesOf({});
  ASSERT_TRUE(prices.ok());
  EXPECT_FALSE(prices->any());
}

TEST(CostFlags, ReadsEachPrice) {
  auto prices = PricesOf({"--cost-core-hour", "0.05", "--cost-gib-hour=0"});
  ASSERT_TRUE(prices.ok()) << prices.error().message;
  EXPECT_EQ(prices->core_hour, 0.05);
  EXPECT_EQ(prices->gib_hour, 0.0);
}

TEST(CostFlags, RefusesWhatIsNotANonNegativeNumber) {
  for (const std::string bad : {"", "abc", "-1", "1e999", "nan", "0.05$", "inf"}) {
    auto prices = PricesOf({"--cost-gib-hour=" + bad});
    ASSERT_FALSE(prices.ok()) << bad;
    EXPECT_NE(prices.error().message.find("--cost-gib-hour"), std::string::npos) << prices.error().message;
  }
}

TEST(CostFlags, TheUiExitsTwoNamingTheFlag) {
  std::ostringstream out;
  std::ostringstream err;
  const std::vector<std::string> args = {"--store", "/nonexistent/store.db", "--cost-core-hour", "cheap"};
  EXPECT_EQ(RunUiCommand(args, out, err), 2);
  EXPECT_NE(err.str().find("--cost-core-hour"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace sparktrace::cli
