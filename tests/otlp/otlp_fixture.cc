// Test fixture for the independent OTLP decoder checks in this directory (decode_python.py,
// decode.test.js). It is the only place the bytes under test come from: our OtlpEncoder and
// BuildResourceAttributes, on the fixed spans below. The checkers spell out the same values
// from this description, decoding with the official OTLP schema.
//
//   otlp_fixture request FILE   writes the encoded ExportTraceServiceRequest to FILE
//   otlp_fixture response FILE  reads an ExportTraceServiceResponse from FILE and prints
//                               "rejected_spans=N" and "error_message=TEXT" lines
//
// The spans:
//   0 "spark.execute_plan": trace_id 01..10, span_id 11..18, parent 21..28, trace_state
//     "congo=t61rcWkgMzE", SERVER, start 1700000000123456789, end 1700000001987654321;
//     attributes airflow.dag_id="daily_etl", airflow.try_number=3,
//     spark.rows=-9007199254740993, ratio=0.125, cached=false, tables=["sales","","ünïcode"],
//     empty=""; events "exception" @1700000000500000000 {exception.type="ValueError",
//     exception.message="bad ✓"} and "checkpoint" (no time, no attributes); status ERROR
//     "task failed".
//   1 "root": same trace, span_id 31..38, no parent, CLIENT, start 1, end 2, status unset.
//   2 "ok": same trace, span_id 41..48, parent 11..18, INTERNAL, status OK.
// Resource: BuildResourceAttributes("0.1.0-test") with K8S_POD_NAME=pod-1 and
// OTEL_RESOURCE_ATTRIBUTES="team=data%20eng". Scope: "sparktrace" version "0.1.0-test".

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tracing/otlp/encoder.h"
#include "tracing/otlp/response.h"
#include "tracing/otlp/resource_attributes.h"

namespace {

using sparktrace::tracing::Span;
using sparktrace::tracing::SpanEvent;
using sparktrace::tracing::SpanKind;
using sparktrace::tracing::StatusCode;

template <typename Id>
Id Sequence(std::uint8_t first) {
  Id id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(first + i);
  return id;
}

std::vector<Span> FixtureSpans() {
  std::vector<Span> spans(3);
  Span& plan = spans[0];
  plan.trace_id = Sequence<sparktrace::tracing::TraceId>(0x01);
  plan.span_id = Sequence<sparktrace::tracing::SpanId>(0x11);
  plan.parent_span_id = Sequence<sparktrace::tracing::SpanId>(0x21);
  plan.trace_state = "congo=t61rcWkgMzE";
  plan.name = "spark.execute_plan";
  plan.kind = SpanKind::kServer;
  plan.start_time_unix_nano = 1700000000123456789ULL;
  plan.end_time_unix_nano = 1700000001987654321ULL;
  plan.attributes = {
      {"airflow.dag_id", std::string("daily_etl")},
      {"airflow.try_number", std::int64_t{3}},
      {"spark.rows", std::int64_t{-9007199254740993LL}},
      {"ratio", 0.125},
      {"cached", false},
      {"tables", std::vector<std::string>{"sales", "",
                                          "\xc3\xbc"
                                          "n"
                                          "\xc3\xaf"
                                          "code"}},
      {"empty", std::string()},
  };
  plan.events = {
      SpanEvent{"exception",
                1700000000500000000ULL,
                {{"exception.type", std::string("ValueError")},
                 {"exception.message", std::string("bad \xe2\x9c\x93")}}},
      SpanEvent{"checkpoint", 0, {}},
  };
  plan.status_code = StatusCode::kError;
  plan.status_message = "task failed";

  Span& root = spans[1];
  root.trace_id = plan.trace_id;
  root.span_id = Sequence<sparktrace::tracing::SpanId>(0x31);
  root.name = "root";
  root.kind = SpanKind::kClient;
  root.start_time_unix_nano = 1;
  root.end_time_unix_nano = 2;

  Span& ok = spans[2];
  ok.trace_id = plan.trace_id;
  ok.span_id = Sequence<sparktrace::tracing::SpanId>(0x41);
  ok.parent_span_id = plan.span_id;
  ok.name = "ok";
  ok.kind = SpanKind::kInternal;
  ok.status_code = StatusCode::kOk;
  return spans;
}

int WriteRequest(const char* path) {
  const std::map<std::string, std::string> environment = {{"K8S_POD_NAME", "pod-1"},
                                                          {"OTEL_RESOURCE_ATTRIBUTES", "team=data%20eng"}};
  auto resource = sparktrace::tracing::otlp::BuildResourceAttributes(
      "0.1.0-test", [&environment](const std::string& name) -> std::optional<std::string> {
        auto found = environment.find(name);
        if (found == environment.end()) return std::nullopt;
        return found->second;
      });
  const sparktrace::tracing::otlp::OtlpEncoder encoder(std::move(resource.attributes), "0.1.0-test");
  const std::vector<Span> spans = FixtureSpans();
  const std::string bytes = encoder.Encode(spans);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::cerr << "cannot write " << path << "\n";
    return 1;
  }
  return 0;
}

int ReadResponse(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto parsed = sparktrace::tracing::otlp::ParseExportTraceServiceResponse(bytes);
  if (!parsed.ok()) {
    std::cerr << parsed.error().ToString() << "\n";
    return 1;
  }
  std::cout << "rejected_spans=" << parsed->rejected_spans << "\nerror_message=" << parsed->error_message
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode == "request") return WriteRequest(argv[2]);
  if (mode == "response") return ReadResponse(argv[2]);
  std::cerr << "usage: otlp_fixture request|response FILE\n";
  return 2;
}
