#pragma once
// Decodes the tracing-relevant fields of a Spark Connect request message (see RequestInfo).
//
// Reads straight from the wire format, field by field, with protobuf's semantics for repeated
// occurrences (last scalar wins, embedded messages merge, a oneof keeps its last member). Unknown
// fields are skipped. Never throws; arbitrary bytes give a failure status and whatever was read
// before and around the bad field.
//
// Threads: a pure function; call it from any thread. The slices are only read during the call.

#include "spark_connect/message_slices.h"
#include "spark_connect/method.h"
#include "spark_connect/request_info.h"

namespace sparktrace::spark_connect {

// `message` is one request message of `method` (for AddArtifacts: one message of the client
// stream). For Method::kUnknown nothing is read and the status is kNotDecoded.
RequestInfo DecodeRequest(Method method, MessageSlices message);

}  // namespace sparktrace::spark_connect
