#pragma once
// XXH32, the checksum lz4-java puts in every LZ4Block header. Debian's liblz4 keeps its copy of xxhash
// private (no exported XXH32 symbol) and libxxhash-dev is not among our build dependencies, so this is
// our own implementation of the published algorithm (github.com/Cyan4973/xxHash, doc/xxhash_spec.md),
// checked against the reference library's outputs in tests/unit/listener/eventlog/eventlog_xxhash32_test.cc.

#include <cstdint>
#include <string_view>

namespace sparktrace::listener::eventlog {

std::uint32_t XxHash32(std::string_view data, std::uint32_t seed);

}  // namespace sparktrace::listener::eventlog
