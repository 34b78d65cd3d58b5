#pragma once
// Decodes the tracing-relevant fields of a Spark Connect response message (see ResponseInfo).
//
// Same rules as DecodeRequest: wire format read in place across slices, protobuf semantics for
// repeated occurrences, unknown fields skipped, Arrow data skipped by length (never copied), no
// exceptions, a failure status plus whatever could be read.
//
// Threads: a pure function; call it from any thread. The slices are only read during the call.

#include "spark_connect/message_slices.h"
#include "spark_connect/method.h"
#include "spark_connect/response_info.h"

namespace sparktrace::spark_connect {

// `message` is one response message of `method`: an ExecutePlanResponse for ExecutePlan and
// ReattachExecute. For Method::kUnknown nothing is read and the status is kNotDecoded.
ResponseInfo DecodeResponse(Method method, MessageSlices message);

}  // namespace sparktrace::spark_connect
