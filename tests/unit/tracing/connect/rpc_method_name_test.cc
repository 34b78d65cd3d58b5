// NameRpcMethod: which :path values name their RPC span, and which are `_OTHER`.
#include "tracing/connect/rpc_method_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sparktrace::tracing::connect {
namespace {

TEST(RpcMethodName, GrpcPathsNameServiceAndMethod) {
  struct Case {
    std::string path, service, method;
  };
  const std::vector<Case> cases = {
      {"/spark.connect.SparkConnectService/ExecutePlan", "spark.connect.SparkConnectService", "ExecutePlan"},
      {"/spark.connect.SparkConnectService/ListSqlExecutions", "spark.connect.SparkConnectService",
       "ListSqlExecutions"},
      {"/grpc.health.v1.Health/Check", "grpc.health.v1.Health", "Check"},
      {"/Greeter/say_hello_2", "Greeter", "say_hello_2"},
  };
  for (const Case& c : cases) {
    const RpcMethodName name = NameRpcMethod(c.path);
    EXPECT_TRUE(name.named_by_path) << c.path;
    EXPECT_EQ(name.service, c.service) << c.path;
    EXPECT_EQ(name.method, c.method) << c.path;
    EXPECT_EQ(name.SpanName(), c.service + "/" + c.method);
  }
}

TEST(RpcMethodName, TheLongestNamedPathIsTheBound) {
  const std::string prefix = "/s.S/";
  const std::string at_bound = prefix + std::string(kMaxNamedMethodPathBytes - prefix.size(), 'm');
  EXPECT_TRUE(NameRpcMethod(at_bound).named_by_path);
  EXPECT_FALSE(NameRpcMethod(at_bound + "m").named_by_path);
}

TEST(RpcMethodName, AnythingElseIsOther) {
  const std::vector<std::string> paths = {
      "",
      "/",
      "//",
      "ExecutePlan",
      "spark.connect.SparkConnectService/ExecutePlan",  // no leading '/'
      "/spark.connect.SparkConnectService",             // no method
      "/spark.connect.SparkConnectService/",
      "//ExecutePlan",
      "/spark.connect.SparkConnectService/a/b",
      "/spark..connect.S/M",
      "/.spark.S/M",
      "/spark.S./M",
      "/spark.S/M.x",
      "/spark.S/M-x",
      "/spark.S/M x",
      "/spark.S/M\n",
      "/spark.S/M\x7f",
      "/spark.S/M\xc3\xa9",
      std::string("/spark.S/M\0x", 12),
  };
  for (const std::string& path : paths) {
    const RpcMethodName name = NameRpcMethod(path);
    EXPECT_FALSE(name.named_by_path) << testing::PrintToString(path);
    EXPECT_EQ(name.SpanName(), "_OTHER");
    EXPECT_EQ(name.method, "_OTHER");
    EXPECT_EQ(name.service, "");
  }
}

}  // namespace
}  // namespace sparktrace::tracing::connect
