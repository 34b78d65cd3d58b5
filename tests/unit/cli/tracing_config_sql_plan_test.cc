// --sql-plan-max-bytes (docs/tracing.md, "SQL executions"): the spark.sql.execution span's plan bound.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/tracing_config.h"

namespace sparktrace::cli {
namespace {

Result<TracingConfig> ConfigureSqlPlanWith(std::vector<std::string> args) {
  auto flags = ParseFlags(TracingFlagSpecs(), args, [](const std::string&) { return std::nullopt; });
  if (!flags.ok()) return flags.error();
  return TracingConfigFromFlags(*flags);
}

TEST(TracingConfigSqlPlan, DefaultsTo2MiBAndTakesZero) {
  auto defaults = ConfigureSqlPlanWith({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->sql_plan_max_bytes, std::uint64_t{2} << 20);
  auto off = ConfigureSqlPlanWith({"--sql-plan-max-bytes", "0"});
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->sql_plan_max_bytes, 0u);
  auto small = ConfigureSqlPlanWith({"--sql-plan-max-bytes", "64KiB"});
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->sql_plan_max_bytes, 65536u);
}

TEST(TracingConfigSqlPlan, BadValuesNameTheFlag) {
  for (const char* bad : {"big", "-5", "65MiB"}) {
    auto config = ConfigureSqlPlanWith({"--sql-plan-max-bytes", bad});
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_NE(config.error().message.find("--sql-plan-max-bytes"), std::string::npos) << config.error().message;
  }
}

}  // namespace
}  // namespace sparktrace::cli
