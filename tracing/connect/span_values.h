#pragma once
// What both span builders of this folder (call_tracer.cc, operation_span.cc) do: append an integer
// attribute to a span's list.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::tracing::connect {

inline void AddInt(std::vector<Attribute>& attributes, std::string_view key, std::int64_t value) {
  attributes.push_back({std::string(key), value});
}

}  // namespace sparktrace::tracing::connect
