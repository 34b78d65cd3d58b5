#include "tracing/otlp/resource_attributes.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <utility>

#include "tracing/otlp/headers.h"

namespace sparktrace::tracing::otlp {
namespace {

struct EnvironmentAttribute {
  const char* variable;
  const char* key;
};

// Names a deployment sets from the downward API (env valueFrom.fieldRef: metadata.name,
// metadata.uid, metadata.namespace, spec.nodeName; the container name is written literally);
// the keys are OpenTelemetry's k8s.* semantic conventions.
constexpr std::array<EnvironmentAttribute, 5> kKubernetesAttributes = {{
    {"K8S_POD_NAME", "k8s.pod.name"},
    {"K8S_POD_UID", "k8s.pod.uid"},
    {"K8S_NAMESPACE_NAME", "k8s.namespace.name"},
    {"K8S_NODE_NAME", "k8s.node.name"},
    {"K8S_CONTAINER_NAME", "k8s.container.name"},
}};

std::string HostName() {
  std::array<char, 256> buffer{};
  if (gethostname(buffer.data(), buffer.size() - 1) != 0) return {};
  return std::string(buffer.data());
}

std::string NewUuidV4() {
  std::random_device device;
  std::mt19937_64 random((static_cast<std::uint64_t>(device()) << 32) ^ device());
  std::array<std::uint8_t, 16> bytes{};
  for (auto& byte : bytes) byte = static_cast<std::uint8_t>(random() & 0xff);
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text.push_back('-');
    text.push_back(kDigits[bytes[i] >> 4]);
    text.push_back(kDigits[bytes[i] & 0x0f]);
  }
  return text;
}

void Set(std::vector<Attribute>& attributes, std::string key, AttributeValue value) {
  auto existing = std::find_if(attributes.begin(), attributes.end(),
                               [&key](const Attribute& attribute) { return attribute.key == key; });
  if (existing != attributes.end()) {
    existing->value = std::move(value);
  } else {
    attributes.push_back(Attribute{std::move(key), std::move(value)});
  }
}

std::optional<std::string> NonEmpty(const EnvironmentLookup& environment, const std::string& name) {
  auto value = environment(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

const std::string& ServiceInstanceId() {
  static const std::string id = NewUuidV4();
  return id;
}

ResourceAttributes BuildResourceAttributes(std::string_view service_version,
                                           const EnvironmentLookup& environment) {
  ResourceAttributes resource;
  auto& attributes = resource.attributes;
  Set(attributes, "service.name", std::string("sparktrace"));
  if (!service_version.empty()) Set(attributes, "service.version", std::string(service_version));
  Set(attributes, "service.instance.id", ServiceInstanceId());
  Set(attributes, "process.pid", static_cast<std::int64_t>(getpid()));
  if (std::string host = HostName(); !host.empty()) Set(attributes, "host.name", std::move(host));

  for (const auto& [variable, key] : kKubernetesAttributes) {
    if (auto value = NonEmpty(environment, variable)) Set(attributes, key, std::move(*value));
  }

  if (auto text = NonEmpty(environment, "OTEL_RESOURCE_ATTRIBUTES")) {
    auto entries = ParseOtelKeyValueList(*text);
    if (entries.ok()) {
      for (auto& [key, value] : *entries) Set(attributes, std::move(key), std::move(value));
    } else {
      resource.warnings.push_back("OTEL_RESOURCE_ATTRIBUTES ignored: " + entries.error().message);
    }
  }

  if (auto name = NonEmpty(environment, "OTEL_SERVICE_NAME"))
    Set(attributes, "service.name", std::move(*name));
  return resource;
}

}  // namespace sparktrace::tracing::otlp
