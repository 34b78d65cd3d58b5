// libFuzzer entry point for the Spark Connect wire decoders (spark_connect/).
//
// Input layout: byte 0 chooses where the rest is cut into three slices (as the proxy hands a
// message over, in the pieces of its receive buffers); the rest is the message. Every request and response decoder, for every
// method, reads it. Besides the sanitizers' checks the fuzzer asserts one property: the sliced
// decode gives exactly what the contiguous decode gives.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "spark_connect/request_decoder.h"
#include "spark_connect/response_decoder.h"

namespace sparktrace::spark_connect {
namespace {

constexpr std::array<Method, 13> kAllMethods = {
    Method::kUnknown,        Method::kExecutePlan,    Method::kAnalyzePlan,       Method::kConfig,
    Method::kAddArtifacts,   Method::kArtifactStatus, Method::kInterrupt,         Method::kReattachExecute,
    Method::kReleaseExecute, Method::kReleaseSession, Method::kFetchErrorDetails, Method::kCloneSession,
    Method::kGetStatus};

[[noreturn]] void Fail(const char* what, Method method) {
  std::fprintf(stderr, "spark_connect_fuzzer: %s differs between sliced and contiguous decode (%.*s)\n", what,
               static_cast<int>(MethodName(method).size()), MethodName(method).data());
  std::abort();
}

// Touches every name function so their switch statements see the decoded values.
std::size_t NameLengths(const RequestInfo& request, const ResponseInfo& response) {
  return DecodeStatusName(request.status).size() + PlanKindName(request.plan_kind).size() +
         CommandKindName(request.command_kind).size() + ReleaseTargetName(request.release_target).size() +
         InterruptTypeName(request.interrupt_type).size() +
         ConfigOperationName(request.config_operation).size() + AnalyzeKindName(request.analyze_kind).size() +
         ArtifactPayloadName(request.artifact_payload).size() + ResponseKindName(response.kind).size() +
         DecodeStatusName(response.status).size();
}

int FuzzOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const std::size_t selector = data[0];
  const ByteSlice message(data + 1, size - 1);
  const std::size_t length = message.size();
  const std::size_t cut_a = selector % (length + 1);
  const std::size_t cut_b = cut_a + (selector * 7 + 3) % (length - cut_a + 1);
  const std::array<ByteSlice, 3> sliced = {message.subspan(0, cut_a), message.subspan(cut_a, cut_b - cut_a),
                                           message.subspan(cut_b)};
  const MessageSlices contiguous(&message, 1);

  volatile std::size_t sink = 0;
  for (Method method : kAllMethods) {
    const RequestInfo request = DecodeRequest(method, sliced);
    if (!(request == DecodeRequest(method, contiguous))) {
      Fail("request", method);
    }
    const ResponseInfo response = DecodeResponse(method, sliced);
    if (!(response == DecodeResponse(method, contiguous))) {
      Fail("response", method);
    }
    sink = sink + NameLengths(request, response);
  }
  return 0;
}

}  // namespace
}  // namespace sparktrace::spark_connect

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return sparktrace::spark_connect::FuzzOneInput(data, size);
}
