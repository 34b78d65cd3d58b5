#include "tracing/connect/call_tracer.h"

#include <algorithm>
#include <type_traits>

#include "common/units.h"
#include "spark_connect/relation_type.h"
#include "spark_connect/request_decoder.h"
#include "spark_connect/response_decoder.h"
#include "tracing/connect/call_operation_id.h"
#include "tracing/connect/operation_span.h"
#include "tracing/connect/rpc_attributes.h"
#include "tracing/connect/rpc_method_name.h"
#include "tracing/connect/span_values.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::connect {
namespace sc = spark_connect;
namespace {

// The proxy hands a message over in the pieces the decoders read across: no copy between them.
static_assert(std::is_same_v<proxy::MessageBytes, sc::MessageSlices>);

// Room for a call span's attributes before its Airflow ones (BuildSpan).
constexpr std::size_t kCallAttributesReserved = 24;

// The calls that name an operation, and on which Spark's clients send the operation id header.
bool NamesAnOperation(sc::Method method) {
  return method == sc::Method::kExecutePlan || method == sc::Method::kReattachExecute ||
         method == sc::Method::kReleaseExecute;
}

std::optional<std::string> ValidOperationIdHeader(sc::Method method, const proxy::ClientMetadata& metadata,
                                                  TracingMetrics& metrics) {
  if (!NamesAnOperation(method)) return std::nullopt;
  OperationIdHeader header = ReadOperationIdHeader(metadata);
  if (header.issue) metrics.OperationIdHeaderIgnored(*header.issue);
  return std::move(header.id);
}

void CountUnknownMethod(sc::Method method, std::string_view path, TracingMetrics& metrics) {
  if (method != sc::Method::kUnknown) return;
  const RpcMethodName name = NameRpcMethod(path);
  metrics.UnknownMethod(!name.named_by_path ? UnknownMethodKind::kUnnamed
                        : name.service == tracing::kSparkConnectServiceName
                            ? UnknownMethodKind::kSparkConnect
                            : UnknownMethodKind::kOtherService);
}

std::string_view MethodLabel(sc::Method method) {
  return method == sc::Method::kUnknown ? std::string_view("other") : sc::MethodName(method);
}

void AddString(std::vector<Attribute>& attributes, std::string_view key, std::string_view value) {
  if (!value.empty()) attributes.push_back({std::string(key), std::string(value)});
}

// The request identity every span of a Spark Connect call carries.
void AddSessionAttributes(std::vector<Attribute>& attributes, const sc::RequestInfo& request) {
  AddString(attributes, kSparkConnectSessionIdKey, request.session_id);
  AddString(attributes, tracing::kSparkConnectUserIdKey, request.user_id);
  if (request.client_type) AddString(attributes, tracing::kSparkConnectClientTypeKey, *request.client_type);
}

void AddPlanAttributes(std::vector<Attribute>& attributes, const sc::RequestInfo& request) {
  AddString(attributes, tracing::kSparkConnectPlanKindKey, sc::PlanKindName(request.plan_kind));
  if (request.plan_kind == sc::PlanKind::kRoot && request.root_relation_field != 0) {
    AddString(attributes, tracing::kSparkConnectRelationKey,
              sc::RelationTypeName(request.root_relation_field));
  }
  if (request.plan_kind == sc::PlanKind::kCommand) {
    AddString(attributes, tracing::kSparkConnectCommandKey, sc::CommandKindName(request.command_kind));
  }
}

// What a decode gives when it could read nothing: the method alone.
template <typename Info>
Info NothingRead(sc::Method method) {
  Info info;
  info.method = method;
  return info;
}

InterruptRequest InterruptFor(const sc::RequestInfo& request, SteadyTime at, const SpanId& interrupt_span) {
  InterruptRequest interrupt;
  interrupt.session_id = request.session_id;
  interrupt.at = at;
  if (request.interrupt_type == sc::InterruptType::kOperationId && request.interrupt_operation_id) {
    interrupt.scope = InterruptRequest::Scope::kOperation;
    interrupt.target = *request.interrupt_operation_id;
  } else if (request.interrupt_type == sc::InterruptType::kTag && request.interrupt_operation_tag) {
    interrupt.scope = InterruptRequest::Scope::kTag;
    interrupt.target = *request.interrupt_operation_tag;
  }
  AddString(interrupt.attributes, tracing::kSparkConnectInterruptTypeKey,
            sc::InterruptTypeName(request.interrupt_type));
  AddString(interrupt.attributes, tracing::kInterruptSpanIdKey, ToHex(interrupt_span));
  return interrupt;
}

}  // namespace

CallTracer::CallTracer(const TracerServices& services, const proxy::CallStart& start,
                       RequestTraceContext trace, const std::optional<AirflowIdentity>& airflow)
    : services_(services),
      method_(sc::ClassifyMethod(start.method)),
      path_(start.method),
      peer_(start.peer),
      authority_(start.authority),
      started_at_(start.started_at),
      trace_(std::move(trace)),
      span_id_(services.ids.NewSpanId()),
      planned_operation_span_id_(method_ == sc::Method::kExecutePlan ? services.ids.NewSpanId() : SpanId{}),
      airflow_attributes_(airflow ? ToAttributes(*airflow) : std::vector<Attribute>{}),
      airflow_dag_id_(airflow ? airflow->dag_id : std::string()),
      airflow_task_id_(airflow ? airflow->task_id : std::string()),
      header_operation_id_(ValidOperationIdHeader(method_, start.client_metadata, services.metrics)) {
  CountUnknownMethod(method_, path_, services.metrics);
}

// Without bytes (the message came compressed with an encoding the proxy cannot undo) nothing can
// be read: the message counts as undecodable, and the call goes on with an empty message's info,
// as after a decode that failed at its first field. Decoding the empty `bytes` instead would
// wrongly read as a valid message with every field unset.
template <typename Info>
Info CallTracer::Read(const proxy::TappedMessage& message, Info (*decode)(sc::Method, sc::MessageSlices),
                      std::string_view direction) {
  if (!message.bytes_available) {
    CountUndecodable(direction);
    return NothingRead<Info>(method_);
  }
  Info info = decode(method_, message.bytes);
  if (sc::IsDecodeFailure(info.status)) CountUndecodable(direction);
  return info;
}

sc::RequestInfo CallTracer::ReadRequest(const proxy::TappedMessage& message) {
  return Read(message, sc::DecodeRequest, "in");
}

sc::ResponseInfo CallTracer::ReadResponse(const proxy::TappedMessage& message) {
  return Read(message, sc::DecodeResponse, "out");
}

void CallTracer::CountUndecodable(std::string_view direction) {
  ++undecodable_;
  services_.metrics.UndecodableMessage(MethodLabel(method_), direction);
}

void CallTracer::OnRequestMessage(const proxy::TappedMessage& message) {
  // Only the first message names the session and operation; AddArtifacts' later chunks are data.
  if (request_ || method_ == sc::Method::kUnknown) return;
  request_ = ReadRequest(message);
  OnFirstRequest(*request_);
}

void CallTracer::OnFirstRequest(const sc::RequestInfo& request) {
  const SteadyTime now = std::chrono::steady_clock::now();
  if (NamesAnOperation(method_)) {
    const CallOperationId named = ResolveCallOperationId(header_operation_id_, request.operation_id);
    operation_id_ = named.id.value_or("");
    operation_id_mismatch_ = named.mismatch;
    if (named.mismatch) services_.metrics.OperationIdHeaderIgnored(OperationIdHeaderIssue::kMismatch);
  }
  switch (method_) {
    case sc::Method::kExecutePlan:
      StartOperation(request);
      break;
    case sc::Method::kReattachExecute:
      if (!operation_id_.empty()) Reattach(request, now);
      break;
    case sc::Method::kReleaseExecute:
      if (!operation_id_.empty()) {
        std::vector<Attribute> event;
        AddString(event, tracing::kSparkConnectReleaseKey, sc::ReleaseTargetName(request.release_target));
        operation_ = services_.operations.Attach(operation_id_, {"release", now, std::move(event)}, false);
        if (!operation_) ended_operation_ = services_.operations.EndedSpanOf(operation_id_);
        role_ = request.release_target == sc::ReleaseTarget::kAll ? OperationCallEnd::Role::kReleaseAll
                                                                  : OperationCallEnd::Role::kOther;
      }
      break;
    case sc::Method::kInterrupt:
      operation_ = services_.operations.InterruptRequested(InterruptFor(request, now, span_id_));
      break;
    default:
      break;
  }
}

Operation CallTracer::NewOperation(const sc::RequestInfo& request, const SpanId& span_id) const {
  Operation operation;
  operation.trace_id = trace_.trace_id;
  operation.span_id = span_id;
  operation.parent_span_id = trace_.parent_span_id;
  operation.trace_state = trace_.tracestate;
  operation.sampled = trace_.sampled;
  operation.started_at = started_at_;
  operation.session_id = request.session_id;
  operation.operation_id = operation_id_;
  operation.airflow_dag_id = airflow_dag_id_;
  operation.airflow_task_id = airflow_task_id_;
  AddSessionAttributes(operation.attributes, request);
  return operation;
}

void CallTracer::StartOperation(const sc::RequestInfo& request) {
  Operation operation = NewOperation(request, planned_operation_span_id_);
  operation.reattachable = request.reattachable.value_or(false);
  operation.tags = request.tags;
  auto& attributes = operation.attributes;
  if (!request.tags.empty()) attributes.push_back({std::string(tracing::kSparkConnectTagsKey), request.tags});
  AddPlanAttributes(attributes, request);
  attributes.push_back({std::string(tracing::kSparkConnectReattachableKey), operation.reattachable});
  attributes.push_back({std::string(tracing::kTraceOriginKey), std::string(TraceOriginName(trace_.origin))});
  attributes.insert(attributes.end(), airflow_attributes_.begin(), airflow_attributes_.end());

  auto [found, created] = services_.operations.Start(std::move(operation));
  operation_ = std::move(found);
  role_ = created ? OperationCallEnd::Role::kStream : OperationCallEnd::Role::kOther;
  if (created) services_.metrics.OperationStarted();
}

void CallTracer::Reattach(const sc::RequestInfo& request, SteadyTime at) {
  std::vector<Attribute> event;
  if (request.last_response_id)
    AddString(event, tracing::kSparkConnectReattachLastResponseIdKey, *request.last_response_id);

  // In case this process never saw the operation start: traced from here, in this call's trace.
  // Only a reattachable execution can be reattached to; its plan and tags were in the ExecutePlan.
  Operation unseen = NewOperation(request, services_.ids.NewSpanId());
  unseen.reattachable = true;
  auto& attributes = unseen.attributes;
  attributes.push_back({std::string(tracing::kSparkConnectReattachableKey), true});
  attributes.push_back({std::string(tracing::kSparkConnectFirstSeenKey), std::string("reattach")});
  attributes.push_back({std::string(tracing::kTraceOriginKey), std::string(TraceOriginName(trace_.origin))});
  attributes.insert(attributes.end(), airflow_attributes_.begin(), airflow_attributes_.end());

  ReattachTarget target =
      services_.operations.Reattach(operation_id_, {"reattach", at, std::move(event)}, std::move(unseen));
  operation_ = std::move(target.operation);
  ended_operation_ = std::move(target.ended);
  role_ = OperationCallEnd::Role::kStream;
  if (target.first_seen) {
    services_.metrics.OperationStarted();
    services_.metrics.OperationFirstSeenOnReattach();
  }
}

void CallTracer::OnResponseMessage(const proxy::TappedMessage& message) {
  if (method_ == sc::Method::kUnknown) return;
  ++responses_;
  if (sc::RespondsWithExecutePlanResponses(method_)) {
    OnStreamResponse(ReadResponse(message));
  } else if (responses_ == 1) {
    OnUnaryResponse(ReadResponse(message));
  }
}

void CallTracer::OnStreamResponse(const sc::ResponseInfo& response) {
  if (response_operation_id_.empty()) response_operation_id_ = response.operation_id;
  if (server_side_session_id_.empty()) server_side_session_id_ = response.server_side_session_id;
  const bool first_batch = response.kind == sc::ResponseKind::kArrowBatch && batches_ == 0;
  if (response.kind == sc::ResponseKind::kArrowBatch) {
    rows_ += response.arrow_row_count;
    arrow_bytes_ += response.arrow_data_bytes;
    ++batches_;
  }
  const bool complete = response.kind == sc::ResponseKind::kResultComplete && !result_complete_;
  result_complete_ = result_complete_ || complete;
  if (!operation_ || role_ != OperationCallEnd::Role::kStream) return;
  // Only the milestones take the registry's lock; counts go over at the end of the call.
  if (responses_ == 1) {
    const SteadyTime now = std::chrono::steady_clock::now();
    if (method_ == sc::Method::kExecutePlan) services_.operations.Identify(operation_, response.operation_id);
    services_.operations.RecordFirstResponse(operation_, now, response.server_side_session_id);
  }
  if (first_batch) services_.operations.RecordFirstBatch(operation_, std::chrono::steady_clock::now());
  if (complete) services_.operations.RecordResultComplete(operation_, std::chrono::steady_clock::now());
  if (response.kind == sc::ResponseKind::kExecutionProgress) OnProgress(response);
}

// Spark sends progress every spark.connect.progress.reportInterval (2 s by default) while the
// operation runs: the registry's lock once per response, and a snapshot copy at most every
// --progress-snapshot-interval, handed to the store's queue (never waiting on it). This call is
// open on the operation, which therefore cannot end before the snapshot is queued.
void CallTracer::OnProgress(const sc::ResponseInfo& response) {
  services_.metrics.ProgressUpdate();
  const SteadyTime now = std::chrono::steady_clock::now();
  std::optional<Operation> snapshot = services_.operations.RecordProgress(operation_, response, now);
  if (!snapshot || !snapshot->sampled) return;
  services_.metrics.ProgressSnapshot();
  services_.spans.SubmitLive(BuildRunningOperationSpan(*snapshot, services_.clock, now));
}

void CallTracer::OnUnaryResponse(const sc::ResponseInfo& response) {
  server_side_session_id_ = response.server_side_session_id;
  response_operation_id_ = response.operation_id;
  if (method_ == sc::Method::kInterrupt && !response.interrupted_ids.empty()) {
    interrupted_ids_ = response.interrupted_ids;
    std::vector<Attribute> event;
    if (request_)
      AddString(event, tracing::kSparkConnectInterruptTypeKey,
                sc::InterruptTypeName(request_->interrupt_type));
    AddString(event, tracing::kInterruptSpanIdKey, ToHex(span_id_));
    services_.operations.Interrupted(interrupted_ids_, std::chrono::steady_clock::now(), event);
  }
}

void CallTracer::OnCallEnded(const proxy::CallEnd& end) {
  const int code = static_cast<int>(end.code);
  if (operation_) {
    OperationCallEnd call_end{role_, started_at_ + end.duration, code, TruncateUtf8(end.error_message), 0, 0,
                              0};
    if (role_ == OperationCallEnd::Role::kStream) {
      call_end.rows = rows_;
      call_end.arrow_bytes = arrow_bytes_;
      call_end.batches = batches_;
    }
    services_.operations.CallEnded(operation_, call_end);
  }
  if (method_ == sc::Method::kReleaseSession && code == 0 && request_) {
    services_.operations.SessionReleased(request_->session_id, started_at_ + end.duration);
  }
  const bool sampled = operation_         ? operation_->sampled
                       : ended_operation_ ? ended_operation_->sampled
                                          : trace_.sampled;
  if (sampled) services_.spans.Submit(BuildSpan(end));
}

Span CallTracer::BuildSpan(const proxy::CallEnd& end) const {
  Span span;
  if (operation_) {
    // A child of its operation, in the operation's trace, whichever connection it came on.
    span.trace_id = operation_->trace_id;
    span.parent_span_id = operation_->span_id;
    span.trace_state = operation_->trace_state;
  } else if (ended_operation_) {
    // Still its operation's child, although the operation span has been sent: a call after it.
    span.trace_id = ended_operation_->trace_id;
    span.parent_span_id = ended_operation_->span_id;
    span.attributes.push_back({std::string(tracing::kSparkConnectEndedBeforeCallKey), true});
  } else {
    span.trace_id = trace_.trace_id;
    span.parent_span_id = trace_.parent_span_id;
    span.trace_state = trace_.tracestate;
  }
  span.span_id = span_id_;
  const RpcMethodName rpc_method = NameRpcMethod(path_);
  span.name = rpc_method.SpanName();
  span.kind = SpanKind::kServer;
  span.start_time_unix_nano = services_.clock.UnixNanos(started_at_);
  span.end_time_unix_nano = services_.clock.UnixNanos(started_at_ + end.duration);

  auto& attributes = span.attributes;
  // A call's span has 14 RPC attributes and up to about 10 of its method's (a Config call ~20 in
  // all): one allocation instead of growing 1, 2, 4, 8, 16, 32 and moving every attribute each time
  // (4.5 % of a traced proxy's CPU under Config load, in perf).
  attributes.reserve(kCallAttributesReserved + airflow_attributes_.size());
  attributes.push_back({std::string(tracing::kRpcSystemKey), std::string(tracing::kRpcSystemGrpc)});
  AddString(attributes, tracing::kRpcServiceKey, rpc_method.service);
  AddString(attributes, tracing::kRpcMethodKey, rpc_method.method);
  AddInt(attributes, tracing::kRpcGrpcStatusCodeKey, static_cast<int>(end.code));
  if (auto server = ParseAuthority(authority_)) {
    AddString(attributes, "server.address", server->address);
    if (server->port) AddInt(attributes, "server.port", *server->port);
  }
  if (auto peer = ParseGrpcPeer(peer_)) {
    AddString(attributes, "network.peer.address", peer->address);
    if (peer->port) AddInt(attributes, "network.peer.port", *peer->port);
  }
  AddInt(attributes, tracing::kRpcRequestMessagesKey, static_cast<std::int64_t>(end.requests.messages));
  AddInt(attributes, tracing::kRpcRequestBytesKey, static_cast<std::int64_t>(end.requests.bytes));
  AddInt(attributes, tracing::kRpcResponseMessagesKey, static_cast<std::int64_t>(end.responses.messages));
  AddInt(attributes, tracing::kRpcResponseBytesKey, static_cast<std::int64_t>(end.responses.bytes));
  if (end.time_to_first_response) {
    attributes.push_back({std::string(tracing::kRpcTimeToFirstResponseMsKey),
                          FractionalMilliseconds(*end.time_to_first_response)});
  }
  attributes.push_back({std::string(tracing::kTraceOriginKey), std::string(TraceOriginName(trace_.origin))});
  AddMethodAttributes(attributes);
  if (undecodable_ > 0) AddInt(attributes, tracing::kUndecodableMessagesKey, undecodable_);
  if (!airflow_attributes_.empty()) {
    attributes.insert(attributes.end(), airflow_attributes_.begin(), airflow_attributes_.end());
  } else if (operation_) {
    // Every span of an Airflow task's trace says so, also a call that came without the headers.
    for (const Attribute& attribute : operation_->attributes) {
      if (attribute.key.starts_with(tracing::kAirflowAttributePrefix)) attributes.push_back(attribute);
    }
  }

  if (end.code != proxy::StatusCode::kOk && IsServerError(static_cast<int>(end.code))) {
    span.status_code = StatusCode::kError;
    span.status_message = TruncateUtf8(end.error_message);
  }
  return span;
}

void CallTracer::AddMethodAttributes(std::vector<Attribute>& attributes) const {
  if (request_) AddSessionAttributes(attributes, *request_);
  AddString(attributes, tracing::kSparkConnectServerSideSessionIdKey, server_side_session_id_);
  // Not operation_->operation_id: another call's thread may be setting it (Identify).
  if (NamesAnOperation(method_)) {
    AddString(attributes, kSparkConnectOperationIdKey,
              operation_id_.empty() ? response_operation_id_ : operation_id_);
    if (operation_id_mismatch_ && header_operation_id_)
      AddString(attributes, tracing::kSparkConnectOperationIdHeaderKey, *header_operation_id_);
  }
  if (sc::RespondsWithExecutePlanResponses(method_)) {
    AddInt(attributes, kSparkConnectResponseRowsKey, rows_);
    AddInt(attributes, kSparkConnectResponseBytesKey, static_cast<std::int64_t>(arrow_bytes_));
    AddInt(attributes, tracing::kSparkConnectResponseBatchesKey, static_cast<std::int64_t>(batches_));
    if (result_complete_) attributes.push_back({std::string(tracing::kSparkConnectResultCompleteKey), true});
  }
  if (!request_) return;
  const sc::RequestInfo& request = *request_;
  switch (method_) {
    case sc::Method::kExecutePlan:
      AddPlanAttributes(attributes, request);
      break;
    case sc::Method::kReattachExecute:
      if (request.last_response_id) {
        AddString(attributes, tracing::kSparkConnectReattachLastResponseIdKey, *request.last_response_id);
      }
      break;
    case sc::Method::kReleaseExecute:
      AddString(attributes, tracing::kSparkConnectReleaseKey, sc::ReleaseTargetName(request.release_target));
      break;
    case sc::Method::kInterrupt:
      AddString(attributes, tracing::kSparkConnectInterruptTypeKey,
                sc::InterruptTypeName(request.interrupt_type));
      if (request.interrupt_operation_id) {
        AddString(attributes, tracing::kSparkConnectInterruptTargetKey, *request.interrupt_operation_id);
      } else if (request.interrupt_operation_tag) {
        AddString(attributes, tracing::kSparkConnectInterruptTargetKey, *request.interrupt_operation_tag);
      }
      if (!interrupted_ids_.empty())
        attributes.push_back({std::string(tracing::kSparkConnectInterruptedIdsKey), interrupted_ids_});
      break;
    case sc::Method::kAnalyzePlan:
      AddString(attributes, tracing::kSparkConnectAnalyzeKey, sc::AnalyzeKindName(request.analyze_kind));
      break;
    case sc::Method::kConfig:
      AddString(attributes, tracing::kSparkConnectConfigOperationKey,
                sc::ConfigOperationName(request.config_operation));
      break;
    case sc::Method::kAddArtifacts:
      AddString(attributes, tracing::kSparkConnectArtifactPayloadKey,
                sc::ArtifactPayloadName(request.artifact_payload));
      break;
    default:
      break;
  }
}

}  // namespace sparktrace::tracing::connect
