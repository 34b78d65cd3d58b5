#include "tracing/connect/rpc_method_name.h"

namespace sparktrace::tracing::connect {
namespace {

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool IsIdentifier(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!IsIdentifierChar(c)) return false;
  }
  return true;
}

// "pkg.sub.Service": identifiers joined by single dots.
bool IsQualifiedName(std::string_view text) {
  while (true) {
    const auto dot = text.find('.');
    if (!IsIdentifier(text.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    text.remove_prefix(dot + 1);
  }
}

constexpr RpcMethodName kOther{{}, kOtherMethodName, false};

}  // namespace

std::string RpcMethodName::SpanName() const {
  if (!named_by_path) return std::string(kOtherMethodName);
  std::string name;
  name.reserve(service.size() + 1 + method.size());
  name.append(service).append("/").append(method);
  return name;
}

RpcMethodName NameRpcMethod(std::string_view path) {
  if (path.size() > kMaxNamedMethodPathBytes || !path.starts_with('/')) return kOther;
  const std::string_view name = path.substr(1);
  const auto slash = name.find('/');
  if (slash == std::string_view::npos) return kOther;
  const std::string_view service = name.substr(0, slash);
  const std::string_view method = name.substr(slash + 1);
  if (!IsQualifiedName(service) || !IsIdentifier(method)) return kOther;
  return {service, method, true};
}

}  // namespace sparktrace::tracing::connect
