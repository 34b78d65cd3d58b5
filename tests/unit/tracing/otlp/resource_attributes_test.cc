#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "tracing/otlp/resource_attributes.h"

namespace sparktrace::tracing::otlp {
namespace {

EnvironmentLookup FakeEnvironment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    auto found = variables.find(name);
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

// 8-4-4-4-12 lower-case hex, version nibble 4, variant 8-b (RFC 4122).
bool IsUuidV4(const std::string& text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    const char c = text[i];
    if (dash != (c == '-')) return false;
    if (!dash && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return text[14] == '4' && std::string("89ab").find(text[19]) != std::string::npos;
}

const AttributeValue* Find(const ResourceAttributes& resource, const std::string& key) {
  for (const auto& attribute : resource.attributes) {
    if (attribute.key == key) return &attribute.value;
  }
  return nullptr;
}

std::string StringOf(const ResourceAttributes& resource, const std::string& key) {
  const AttributeValue* value = Find(resource, key);
  if (value == nullptr || !std::holds_alternative<std::string>(*value)) return "<missing>";
  return std::get<std::string>(*value);
}

TEST(ResourceAttributes, DefaultsWithoutEnvironment) {
  const auto resource = BuildResourceAttributes("0.1.0", FakeEnvironment({}));
  EXPECT_TRUE(resource.warnings.empty());
  EXPECT_EQ(StringOf(resource, "service.name"), "sparktrace");
  EXPECT_EQ(StringOf(resource, "service.version"), "0.1.0");
  EXPECT_EQ(StringOf(resource, "service.instance.id"), ServiceInstanceId());
  EXPECT_TRUE(IsUuidV4(ServiceInstanceId())) << ServiceInstanceId();
  const AttributeValue* pid = Find(resource, "process.pid");
  ASSERT_NE(pid, nullptr);
  EXPECT_EQ(std::get<std::int64_t>(*pid), static_cast<std::int64_t>(getpid()));
  EXPECT_NE(StringOf(resource, "host.name"), "<missing>");
  EXPECT_EQ(Find(resource, "k8s.pod.name"), nullptr);
}

TEST(ResourceAttributes, InstanceIdIsStableWithinTheProcess) {
  const auto first = BuildResourceAttributes("", FakeEnvironment({}));
  const auto second = BuildResourceAttributes("", FakeEnvironment({}));
  EXPECT_EQ(StringOf(first, "service.instance.id"), StringOf(second, "service.instance.id"));
  EXPECT_EQ(Find(first, "service.version"), nullptr);
}

TEST(ResourceAttributes, KubernetesDownwardApiVariables) {
  const auto resource =
      BuildResourceAttributes("0.1.0", FakeEnvironment({{"K8S_POD_NAME", "sparktrace-7d9f"},
                                                        {"K8S_NAMESPACE_NAME", "data"},
                                                        {"K8S_NODE_NAME", "node-3"},
                                                        {"K8S_POD_UID", "0f1e2d3c"},
                                                        {"K8S_CONTAINER_NAME", ""}}));  // empty means unset
  EXPECT_EQ(StringOf(resource, "k8s.pod.name"), "sparktrace-7d9f");
  EXPECT_EQ(StringOf(resource, "k8s.namespace.name"), "data");
  EXPECT_EQ(StringOf(resource, "k8s.node.name"), "node-3");
  EXPECT_EQ(StringOf(resource, "k8s.pod.uid"), "0f1e2d3c");
  EXPECT_EQ(Find(resource, "k8s.container.name"), nullptr);
}

TEST(ResourceAttributes, OtelResourceAttributesOverrideAndAdd) {
  const auto resource = BuildResourceAttributes(
      "0.1.0", FakeEnvironment({{"OTEL_RESOURCE_ATTRIBUTES",
                                 "deployment.environment=prod,service.name=from-attrs,team=data%20eng,"
                                 "k8s.pod.name=override"},
                                {"K8S_POD_NAME", "from-downward-api"}}));
  EXPECT_TRUE(resource.warnings.empty());
  EXPECT_EQ(StringOf(resource, "deployment.environment"), "prod");
  EXPECT_EQ(StringOf(resource, "service.name"), "from-attrs");
  EXPECT_EQ(StringOf(resource, "team"), "data eng");
  EXPECT_EQ(StringOf(resource, "k8s.pod.name"), "override");
  int service_names = 0;
  for (const auto& attribute : resource.attributes) service_names += attribute.key == "service.name";
  EXPECT_EQ(service_names, 1);
}

TEST(ResourceAttributes, OtelServiceNameWinsOverEverything) {
  const auto resource =
      BuildResourceAttributes("", FakeEnvironment({{"OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs"},
                                                   {"OTEL_SERVICE_NAME", "etl-proxy"}}));
  EXPECT_EQ(StringOf(resource, "service.name"), "etl-proxy");
}

TEST(ResourceAttributes, MalformedOtelResourceAttributesIsDiscardedWithAWarning) {
  const auto resource =
      BuildResourceAttributes("", FakeEnvironment({{"OTEL_RESOURCE_ATTRIBUTES", "good=1,broken,team=x"}}));
  ASSERT_EQ(resource.warnings.size(), 1u);
  EXPECT_NE(resource.warnings[0].find("OTEL_RESOURCE_ATTRIBUTES"), std::string::npos);
  EXPECT_EQ(Find(resource, "good"), nullptr);  // the whole value is dropped, per the OTel spec
  EXPECT_EQ(Find(resource, "team"), nullptr);
  EXPECT_EQ(StringOf(resource, "service.name"), "sparktrace");
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
