// The --admin-* limit flags (admin/admin_flags.h): their defaults are AdminLimits' own, values are
// read in their units, and a malformed value is an error that names its flag.

#include "admin/admin_flags.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace sparktrace::admin {
namespace {

using std::chrono::milliseconds;

Result<AdminLimits> LimitsFrom(const std::vector<std::string>& args) {
  auto flags =
      ParseFlags(AdminFlagSpecs(), args, [](const std::string&) { return std::optional<std::string>(); });
  if (!flags.ok()) return flags.error();
  return AdminLimitsFromFlags(*flags);
}

TEST(AdminFlags, DefaultsAreTheLimitsDefaults) {
  const auto limits = LimitsFrom({});
  ASSERT_TRUE(limits.ok()) << limits.error().message;
  const AdminLimits defaults;
  EXPECT_EQ(limits->max_request_line_bytes, defaults.max_request_line_bytes);
  EXPECT_EQ(limits->max_header_bytes, defaults.max_header_bytes);
  EXPECT_EQ(limits->max_headers, defaults.max_headers);
  EXPECT_EQ(limits->header_timeout, defaults.header_timeout);
  EXPECT_EQ(limits->body_timeout, defaults.body_timeout);
  EXPECT_EQ(limits->idle_timeout, defaults.idle_timeout);
  EXPECT_EQ(limits->write_timeout, defaults.write_timeout);
  EXPECT_EQ(limits->max_connections, defaults.max_connections);
  EXPECT_EQ(limits->body_idle_timeout, defaults.body_idle_timeout);
  EXPECT_EQ(limits->max_connections_per_peer, defaults.max_connections_per_peer);
  EXPECT_EQ(limits->probe_connections, defaults.probe_connections);
  EXPECT_EQ(limits->max_body_buffer_bytes, defaults.max_body_buffer_bytes);
  EXPECT_EQ(limits->max_ui_queue, defaults.max_ui_queue);
  EXPECT_TRUE(limits->allowed_hosts.empty());
}

TEST(AdminFlags, ReadsEveryFlagInItsUnit) {
  const auto limits = LimitsFrom({"--admin-max-connections",
                                  "16",
                                  "--admin-max-request-line",
                                  "4KiB",
                                  "--admin-max-header-bytes",
                                  "64KiB",
                                  "--admin-max-headers",
                                  "50",
                                  "--admin-header-timeout",
                                  "1s",
                                  "--admin-body-timeout",
                                  "2m",
                                  "--admin-idle-timeout",
                                  "500ms",
                                  "--admin-write-timeout",
                                  "45s",
                                  "--admin-max-body-buffer",
                                  "128MiB",
                                  "--admin-ui-queue",
                                  "4",
                                  "--admin-allowed-hosts",
                                  "sparktrace.ns.svc, .example.com,*",
                                  "--admin-body-idle-timeout",
                                  "3s",
                                  "--admin-max-connections-per-peer",
                                  "8",
                                  "--admin-probe-connections",
                                  "0"});
  ASSERT_TRUE(limits.ok()) << limits.error().message;
  EXPECT_EQ(limits->max_connections, 16u);
  EXPECT_EQ(limits->max_request_line_bytes, 4096u);
  EXPECT_EQ(limits->max_header_bytes, 65536u);
  EXPECT_EQ(limits->max_headers, 50u);
  EXPECT_EQ(limits->header_timeout, milliseconds(1000));
  EXPECT_EQ(limits->body_timeout, milliseconds(120'000));
  EXPECT_EQ(limits->idle_timeout, milliseconds(500));
  EXPECT_EQ(limits->write_timeout, milliseconds(45'000));
  EXPECT_EQ(limits->max_body_buffer_bytes, std::size_t{128} << 20);
  EXPECT_EQ(limits->max_ui_queue, 4u);
  EXPECT_EQ(limits->allowed_hosts, (std::vector<std::string>{"sparktrace.ns.svc", ".example.com", "*"}));
  EXPECT_EQ(limits->body_idle_timeout, milliseconds(3000));
  EXPECT_EQ(limits->max_connections_per_peer, 8u);
  EXPECT_EQ(limits->probe_connections, 0u);
}

TEST(AdminFlags, AMalformedValueNamesItsFlag) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"admin-max-connections", "0"},
      {"admin-max-connections", "many"},
      {"admin-max-request-line", "10"},
      {"admin-max-request-line", "8 KiB"},
      {"admin-max-header-bytes", "1GiB"},
      {"admin-max-headers", "-1"},
      {"admin-header-timeout", "0"},
      {"admin-header-timeout", "10"},
      {"admin-body-timeout", "soon"},
      {"admin-idle-timeout", "2d"},
      {"admin-write-timeout", ""},
      {"admin-max-body-buffer", "1KiB"},
      {"admin-ui-queue", "0"},
      {"admin-allowed-hosts", "a b"},
      {"admin-allowed-hosts", "*.example.com"},
      {"admin-allowed-hosts", "a,,b"},
      {"admin-body-idle-timeout", "0"},
      {"admin-max-connections-per-peer", "0"},
      {"admin-probe-connections", "-1"},
      {"admin-probe-connections", "2000"},
  };
  for (const auto& [flag, value] : bad) {
    const auto limits = LimitsFrom({"--" + flag, value});
    ASSERT_FALSE(limits.ok()) << flag << " " << value;
    EXPECT_NE(limits.error().message.find("--" + flag), std::string::npos) << limits.error().message;
  }
}

}  // namespace
}  // namespace sparktrace::admin
