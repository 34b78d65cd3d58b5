// The PostgreSQL store's text forms (tracing/store/postgres/client/pg_text.h): COPY rows and array
// literals, for plain ASCII (taken as it is) and for everything else (made valid UTF-8 first).

#include "tracing/store/postgres/client/pg_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace sparktrace::tracing::store {
namespace {

TEST(PgTextTest, CopyRowsEscapeTextAndCleanWhatIsNotUtf8) {
  std::string out;
  CopyRows copy(out);
  copy.Text("plain");
  copy.Text("tab\there\\ and\nnewline\r");
  copy.Text("\\");
  copy.Text(std::string("bad\xff\0end", 8));
  copy.Text("caf\xc3\xa9");  // valid UTF-8 stays
  copy.Null();
  copy.End();
  EXPECT_EQ(out,
            "plain\ttab\\there\\\\ and\\nnewline\\r\t\\\\\tbad\xEF\xBF\xBD\xEF\xBF\xBD"
            "end\tcaf\xc3\xa9\t\\N\n");
}

TEST(PgTextTest, CopyRowsWriteEveryIntegerInFull) {
  std::string out;
  CopyRows copy(out);
  for (const std::int64_t value :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1'714'564'800'000'000'000},
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    copy.Int(value);
  }
  copy.End();
  EXPECT_EQ(out, "0\t-1\t1714564800000000000\t-9223372036854775808\t9223372036854775807\n");
}

TEST(PgTextTest, ArrayLiteralsQuoteEveryElementAndCleanWhatIsNotUtf8) {
  const std::vector<std::string> items = {"4bf92f3577b34da6a3ce929d0e0e4736", "say \"hi\" \\ there",
                                          std::string("nul\0x", 5), "\xff", ""};
  EXPECT_EQ(TextArray(items),
            "{\"4bf92f3577b34da6a3ce929d0e0e4736\",\"say \\\"hi\\\" \\\\ there\",\"nul\xEF\xBF\xBDx\","
            "\"\xEF\xBF\xBD\",\"\"}");
  const std::vector<std::optional<std::string>> with_null = {std::string("a"), std::nullopt};
  EXPECT_EQ(TextArray(with_null), "{\"a\",NULL}");
}

}  // namespace
}  // namespace sparktrace::tracing::store
