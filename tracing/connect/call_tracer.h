#pragma once
// The tracing tap of one proxied call: reads the Spark Connect messages as they pass (never
// changing them), feeds the operation they belong to, and at the end submits the call's SERVER
// span (docs/tracing.md, "RPC spans").
//
// Threads: like every CallTap, driven by the one worker thread that owns the call. Shared state
// (operations, metrics, the span sink) is reached through TracerServices, all thread-safe.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/call_observer.h"
#include "spark_connect/message_slices.h"
#include "spark_connect/method.h"
#include "spark_connect/request_info.h"
#include "spark_connect/response_info.h"
#include "tracing/airflow_identity.h"
#include "tracing/connect/operation_registry.h"
#include "tracing/connect/tracing_metrics.h"
#include "tracing/connect/wall_clock.h"
#include "tracing/id_generator.h"
#include "tracing/span_sink.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing::connect {

struct TracerServices {
  OperationRegistry& operations;
  SpanSink& spans;
  TracingMetrics& metrics;
  IdGenerator& ids;
  const WallClock& clock;
};

class CallTracer final : public proxy::CallTap {
 public:
  // `airflow`: the call's valid x-airflow-* identity, if it had one.
  CallTracer(const TracerServices& services, const proxy::CallStart& start, RequestTraceContext trace,
             const std::optional<AirflowIdentity>& airflow);

  // The call's span id: the parent named in the traceparent sent upstream.
  const SpanId& span_id() const { return span_id_; }

  // Messages of methods the decoder does not know (other services', newer Spark Connect ones) are
  // never read: the call is forwarded as it came, and traced by its path alone.
  bool NeedsMessageBytes() const override { return method_ != spark_connect::Method::kUnknown; }
  void OnRequestMessage(const proxy::TappedMessage& message) override;
  void OnResponseMessage(const proxy::TappedMessage& message) override;
  void OnCallEnded(const proxy::CallEnd& end) override;

 private:
  // The message decoded, counting it when it could not be (also when the proxy had no bytes to
  // give: compressed with an encoding it cannot undo). What could be read is returned either way.
  // Decodes `message` with `decode`, counting it as undecodable (direction "in"/"out") when it
  // cannot be read; defined and used in the .cc only.
  template <typename Info>
  Info Read(const proxy::TappedMessage& message,
            Info (*decode)(spark_connect::Method, spark_connect::MessageSlices), std::string_view direction);
  spark_connect::RequestInfo ReadRequest(const proxy::TappedMessage& message);
  spark_connect::ResponseInfo ReadResponse(const proxy::TappedMessage& message);
  void CountUndecodable(std::string_view direction);
  void OnFirstRequest(const spark_connect::RequestInfo& request);
  // An operation with what every operation takes from its first call: trace, session, identity.
  Operation NewOperation(const spark_connect::RequestInfo& request, const SpanId& span_id) const;
  void StartOperation(const spark_connect::RequestInfo& request);
  void Reattach(const spark_connect::RequestInfo& request, SteadyTime at);
  void OnStreamResponse(const spark_connect::ResponseInfo& response);
  // An execution_progress response of the operation's stream: kept, and maybe shown live.
  void OnProgress(const spark_connect::ResponseInfo& response);
  void OnUnaryResponse(const spark_connect::ResponseInfo& response);
  Span BuildSpan(const proxy::CallEnd& end) const;
  void AddMethodAttributes(std::vector<Attribute>& attributes) const;

  const TracerServices& services_;
  const spark_connect::Method method_;
  const std::string path_;
  const std::string peer_;
  const std::string authority_;
  const SteadyTime started_at_;
  const RequestTraceContext trace_;
  const SpanId span_id_;
  const SpanId planned_operation_span_id_;  // for an ExecutePlan: its operation's span id
  const std::vector<Attribute> airflow_attributes_;
  const std::string airflow_dag_id_;  // empty without an identity
  const std::string airflow_task_id_;
  // A valid spark-connect-operation-id header (ExecutePlan, ReattachExecute, ReleaseExecute only).
  const std::optional<std::string> header_operation_id_;

  // The operation the call names (call_operation_id.h): the body's operation_id, else the
  // header's; empty when neither named one.
  std::string operation_id_;
  bool operation_id_mismatch_ = false;  // the header named another operation than the body

  std::optional<spark_connect::RequestInfo> request_;  // the first request message
  std::shared_ptr<Operation> operation_;               // the operation this call belongs to
  // A ReattachExecute / ReleaseExecute for an operation that had already ended (e.g. the
  // release_all a client sends after a failed ExecutePlan): its span is this call's parent.
  std::optional<OperationSpanInfo> ended_operation_;
  OperationCallEnd::Role role_ = OperationCallEnd::Role::kOther;

  std::uint64_t responses_ = 0;
  std::string response_operation_id_;
  std::string server_side_session_id_;
  std::int64_t rows_ = 0;
  std::uint64_t arrow_bytes_ = 0;
  std::uint64_t batches_ = 0;
  bool result_complete_ = false;
  std::vector<std::string> interrupted_ids_;
  std::uint32_t undecodable_ = 0;
};

}  // namespace sparktrace::tracing::connect
