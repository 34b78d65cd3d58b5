#include "proxy/descriptor_limit.h"

#include <sys/resource.h>

#include <gtest/gtest.h>

namespace sparktrace::proxy {
namespace {

TEST(DescriptorLimit, ConnectionsFitUnderTheLimitLessTheReserve) {
  EXPECT_EQ(ConnectionsThatFit(1'048'576, 300, 4096), 4096) << "the flag when there is room";
  EXPECT_EQ(ConnectionsThatFit(1024, 300, 4096), 724) << "lowered to what the descriptors allow";
  EXPECT_EQ(ConnectionsThatFit(200, 300, 4096), 1) << "a tiny limit still serves one";
}

TEST(DescriptorLimit, RaisesTheSoftLimitToTheHardOne) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  const DescriptorLimit raised = RaiseDescriptorLimit();
  EXPECT_EQ(raised.before, before.rlim_cur);
  EXPECT_EQ(raised.now, before.rlim_max);
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, after.rlim_max);
}

}  // namespace
}  // namespace sparktrace::proxy
