#pragma once
// The OTLP Resource every exported span carries: who produced it. Built once at start-up.
//
// Attributes, later sources overriding earlier ones by key:
//   1. service.name=sparktrace, service.version, service.instance.id (a random UUID, the same
//      for the whole process), process.pid, host.name;
//   2. Kubernetes attributes from downward-API environment variables, each only when set and
//      non-empty:
//        K8S_POD_NAME -> k8s.pod.name          K8S_POD_UID        -> k8s.pod.uid
//        K8S_NAMESPACE_NAME -> k8s.namespace.name   K8S_NODE_NAME -> k8s.node.name
//        K8S_CONTAINER_NAME -> k8s.container.name
//   3. OTEL_RESOURCE_ATTRIBUTES ("k=v,k=v", percent-decoded), per the OpenTelemetry SDK
//      environment variable spec; a malformed value is discarded whole and reported;
//   4. OTEL_SERVICE_NAME, which wins over any service.name.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::tracing::otlp {

// Reads one environment variable; std::nullopt when it is not set.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

// getenv(). Read it before starting threads that may call setenv().
std::optional<std::string> ProcessEnvironment(const std::string& name);

struct ResourceAttributes {
  std::vector<Attribute> attributes;
  // Problems found and worked around (a discarded OTEL_RESOURCE_ATTRIBUTES), for the caller to log.
  std::vector<std::string> warnings;
};

// `service_version` becomes service.version (left out when empty).
ResourceAttributes BuildResourceAttributes(std::string_view service_version,
                                           const EnvironmentLookup& environment = ProcessEnvironment);

// A random UUID (version 4), made on first use and then the same for the life of the process.
// Thread-safe.
const std::string& ServiceInstanceId();

}  // namespace sparktrace::tracing::otlp
