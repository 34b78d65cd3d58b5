#include <gtest/gtest.h>

#include <string>

#include "spark/connect/base.pb.h"
#include "spark_connect/method.h"

namespace sparktrace::spark_connect {
namespace {

TEST(SparkConnectMethod, ClassifiesEveryMethodOfTheServiceDefinition) {
  // The service in proto/spark/connect/base.proto is the reference: every method it declares
  // must be known, under the path gRPC builds for it.
  const google::protobuf::ServiceDescriptor* service =
      spark::connect::ExecutePlanRequest::descriptor()->file()->FindServiceByName("SparkConnectService");
  ASSERT_NE(service, nullptr);
  ASSERT_EQ(service->method_count(), 12);
  for (int i = 0; i < service->method_count(); ++i) {
    const std::string name = service->method(i)->name();
    const std::string path = "/" + service->full_name() + "/" + name;
    const Method method = ClassifyMethod(path);
    EXPECT_NE(method, Method::kUnknown) << path;
    EXPECT_EQ(MethodName(method), name);
  }
}

TEST(SparkConnectMethod, Examples) {
  EXPECT_EQ(ClassifyMethod("/spark.connect.SparkConnectService/ExecutePlan"), Method::kExecutePlan);
  EXPECT_EQ(ClassifyMethod("/spark.connect.SparkConnectService/ReattachExecute"), Method::kReattachExecute);
  EXPECT_EQ(ClassifyMethod("/spark.connect.SparkConnectService/ReleaseExecute"), Method::kReleaseExecute);
  EXPECT_EQ(ClassifyMethod("/spark.connect.SparkConnectService/Config"), Method::kConfig);
  EXPECT_EQ(ClassifyMethod("/spark.connect.SparkConnectService/ArtifactStatus"), Method::kArtifactStatus);
  EXPECT_EQ(ClassifyMethod("/spark.connect.SparkConnectService/FetchErrorDetails"),
            Method::kFetchErrorDetails);
}

TEST(SparkConnectMethod, EverythingElseIsUnknown) {
  for (const char* path :
       {"", "/", "ExecutePlan", "/spark.connect.SparkConnectService/",
        "/spark.connect.SparkConnectService/executeplan", "/spark.connect.SparkConnectService/ExecutePlanX",
        "/spark.connect.SparkConnectService/ExecutePlan/", "/spark.connect.Other/ExecutePlan",
        "/grpc.health.v1.Health/Check", "/spark.connect.SparkConnectService/FutureMethod",
        "spark.connect.SparkConnectService/ExecutePlan"}) {
    EXPECT_EQ(ClassifyMethod(path), Method::kUnknown) << path;
  }
  EXPECT_EQ(MethodName(Method::kUnknown), "unknown");
}

TEST(SparkConnectMethod, OnlyExecuteAndReattachStreamExecutePlanResponses) {
  EXPECT_TRUE(RespondsWithExecutePlanResponses(Method::kExecutePlan));
  EXPECT_TRUE(RespondsWithExecutePlanResponses(Method::kReattachExecute));
  EXPECT_FALSE(RespondsWithExecutePlanResponses(Method::kReleaseExecute));
  EXPECT_FALSE(RespondsWithExecutePlanResponses(Method::kUnknown));
}

}  // namespace
}  // namespace sparktrace::spark_connect
