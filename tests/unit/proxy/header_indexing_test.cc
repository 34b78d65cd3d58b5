// What HPACK does with the headers the proxy sends (ToNv): a value made for one call (a traceparent)
// stays out of the connection's dynamic table, so the headers every call repeats stay in it.

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "proxy/call_connection.h"
#include "proxy/http2_connection.h"

namespace sparktrace::proxy {
namespace {

// One connection's HPACK state on both ends: nghttp2's deflater (ours) and inflater (the peer's).
class HpackPair {
 public:
  HpackPair() {
    nghttp2_hd_deflate_new(&deflater_, 4096);
    nghttp2_hd_inflate_new(&inflater_);
  }
  ~HpackPair() {
    nghttp2_hd_deflate_del(deflater_);
    nghttp2_hd_inflate_del(inflater_);
  }
  HpackPair(const HpackPair&) = delete;
  HpackPair& operator=(const HpackPair&) = delete;

  // Encodes `headers` as the proxy submits them and decodes the block as the peer would: the names
  // the peer was told never to index.
  std::vector<std::string> Send(const std::vector<Header>& headers) {
    const std::vector<nghttp2_nv> nva = ToNv(headers);
    std::vector<std::uint8_t> block(nghttp2_hd_deflate_bound(deflater_, nva.data(), nva.size()));
    const auto written = nghttp2_hd_deflate_hd(deflater_, block.data(), block.size(), nva.data(), nva.size());
    EXPECT_GT(written, 0);
    block_bytes_ = static_cast<std::size_t>(written);
    std::vector<std::string> never_indexed;
    const std::uint8_t* in = block.data();
    std::size_t left = block_bytes_;
    while (true) {
      nghttp2_nv nv{};
      int flags = 0;
      const auto used = nghttp2_hd_inflate_hd2(inflater_, &nv, &flags, in, left, /*in_final=*/1);
      EXPECT_GE(used, 0);
      if (used < 0) break;
      in += used;
      left -= static_cast<std::size_t>(used);
      if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0 && (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) != 0)
        never_indexed.emplace_back(reinterpret_cast<const char*>(nv.name), nv.namelen);
      if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) break;
    }
    nghttp2_hd_inflate_end_headers(inflater_);
    return never_indexed;
  }
  std::size_t block_bytes() const { return block_bytes_; }
  // Entries of the peer's table beyond HPACK's 61 static ones.
  std::size_t dynamic_entries() const { return nghttp2_hd_inflate_get_num_table_entries(inflater_) - 61; }

 private:
  nghttp2_hd_deflater* deflater_ = nullptr;
  nghttp2_hd_inflater* inflater_ = nullptr;
  std::size_t block_bytes_ = 0;
};

// A Config call's request headers to the upstream, with this call's traceparent.
std::vector<Header> CallHeaders(int call, bool never_index_traceparent) {
  char traceparent[56];
  std::snprintf(traceparent, sizeof traceparent, "00-%032x-%016x-01", call, call);
  return {{":method", "POST"},
          {":scheme", "http"},
          {":path", "/spark.connect.SparkConnectService/Config"},
          {":authority", "spark:15002"},
          {"content-type", "application/grpc"},
          {"te", "trailers"},
          {"user-agent", "grpc-python/1.62.1 grpc-c/39.0.0 (linux; chttp2)"},
          {"x-airflow-dag-id", "etl_daily"},
          {"x-airflow-task-id", "load_orders"},
          {"x-airflow-run-id", "scheduled__2026-11-29T00:00:00+00:00"},
          {"traceparent", traceparent, never_index_traceparent}};
}

TEST(HeaderIndexingTest, AValueMadeForOneCallIsNeverIndexedAndTheRepeatedHeadersStayIndexed) {
  HpackPair connection;
  EXPECT_EQ(connection.Send(CallHeaders(1, true)), std::vector<std::string>{"traceparent"});
  // The first call enters what every call repeats (content-type, user-agent, the Airflow headers, …).
  const std::size_t repeated = connection.dynamic_entries();
  EXPECT_GE(repeated, 6U);
  EXPECT_EQ(connection.Send(CallHeaders(2, true)), std::vector<std::string>{"traceparent"});
  const std::size_t steady_block = connection.block_bytes();
  for (int call = 3; call <= 200; ++call) {
    EXPECT_EQ(connection.Send(CallHeaders(call, true)), std::vector<std::string>{"traceparent"});
    // Each call sends the repeated headers as an index each: its block is the traceparent's literal
    // and little else, the same size every time but for the Huffman code of the traceparent's digits.
    EXPECT_LE(connection.block_bytes(), steady_block + 4) << "call " << call;
  }
  EXPECT_EQ(connection.dynamic_entries(), repeated);  // no traceparent entered
}

TEST(HeaderIndexingTest, IndexedTheCallsOwnValuesWouldPushTheRepeatedHeadersOut) {
  // What the flag prevents: every traceparent entered in the table (4,096 bytes, ~98 a traceparent),
  // the repeated headers are pushed out and sent as literals again, over and over.
  HpackPair connection;
  EXPECT_TRUE(connection.Send(CallHeaders(1, false)).empty());
  const std::size_t first_entries = connection.dynamic_entries();
  EXPECT_TRUE(connection.Send(CallHeaders(2, false)).empty());
  const std::size_t second_block = connection.block_bytes();
  std::size_t longest = 0;
  for (int call = 3; call <= 200; ++call) {
    EXPECT_TRUE(connection.Send(CallHeaders(call, false)).empty());
    longest = std::max(longest, connection.block_bytes());
  }
  EXPECT_GT(connection.dynamic_entries(), first_entries);
  EXPECT_GT(longest, second_block + 40);  // some calls sent the repeated headers in full again
}

}  // namespace
}  // namespace sparktrace::proxy
