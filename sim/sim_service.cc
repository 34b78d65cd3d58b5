#include "sim/sim_service.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sim/ids.h"

namespace sparktrace::sim {
namespace {

using spark::connect::ExecutePlanResponse;

std::optional<std::string> Header(const grpc::ServerContext& context, const std::string& name) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(name);
  if (found == metadata.end()) return std::nullopt;
  return std::string(found->second.data(), found->second.size());
}

// Reads an integer x-sim-* header into `out` when present; INVALID_ARGUMENT when malformed.
grpc::Status IntegerHeader(const grpc::ServerContext& context, const std::string& name, std::int64_t min,
                           std::int64_t max, std::int64_t& out) {
  const auto text = Header(context, name);
  if (!text) return grpc::Status::OK;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || ec != std::errc() || end != text->data() + text->size() || value < min ||
      value > max) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "sparktrace-sim: metadata " + name + " must be an integer in [" +
                            std::to_string(min) + ", " + std::to_string(max) + "], got '" + *text + "'");
  }
  out = value;
  return grpc::Status::OK;
}

// Whether a Spark Connect user agent ("_SPARK_CONNECT_PYTHON spark/4.0.0 os/linux …") names
// Spark 4 or later. Under --progress auto the sim plays a server of the client's own version: a
// Spark 4 client gets a Spark 4 server's execution_progress; a 3.x client (or one that does not
// say) a 3.x server's none, as the newer field would mean nothing to it.
bool NamesSpark4OrLater(std::string_view client_type) {
  constexpr std::string_view kSpark = "spark/";
  const auto at = client_type.find(kSpark);
  if (at == std::string_view::npos) return false;
  const std::string_view version = client_type.substr(at + kSpark.size());
  int major = 0;
  const auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), major);
  return ec == std::errc() && end != version.data() && major >= 4;
}

grpc::Status ShapeForCall(const SimConfig& config, const grpc::ServerContext& context,
                          std::string_view client_type, ExecutionShape& shape) {
  shape.batches = config.batches;
  shape.batch_bytes = config.batch_bytes;
  shape.batch_interval = config.batch_interval;
  std::int64_t bytes = static_cast<std::int64_t>(shape.batch_bytes);
  std::int64_t interval_ms = shape.batch_interval.count();
  std::int64_t fail_code = 0;
  const auto max_bytes = static_cast<std::int64_t>(config.max_message_bytes) - 4096;
  for (auto status : {IntegerHeader(context, "x-sim-batches", 0, 1'000'000'000, shape.batches),
                      IntegerHeader(context, "x-sim-batch-bytes", 0, max_bytes, bytes),
                      IntegerHeader(context, "x-sim-batch-interval-ms", 0, 86'400'000, interval_ms),
                      IntegerHeader(context, "x-sim-fail", 1, 16, fail_code),
                      IntegerHeader(context, "x-sim-fail-after", 0, 1'000'000'000, shape.fail_after)}) {
    if (!status.ok()) return status;
  }
  const bool progress = config.progress == SimConfig::Progress::kAlways ||
                        (config.progress == SimConfig::Progress::kAuto && NamesSpark4OrLater(client_type));
  shape.progress_steps = progress ? config.progress_steps : 0;
  shape.progress_tasks = config.progress_tasks;
  if (auto status = IntegerHeader(context, "x-sim-progress-steps", 0, 10'000, shape.progress_steps);
      !status.ok()) {
    return status;
  }
  shape.batch_bytes = static_cast<std::uint64_t>(bytes);
  shape.batch_interval = std::chrono::milliseconds(interval_ms);
  if (fail_code != 0) shape.fail_code = static_cast<grpc::StatusCode>(fail_code);
  return grpc::Status::OK;
}

// A Command that writes a table or files (DataFrameWriter / DataFrameWriterV2): its result stage
// writes output.
bool IsWriteCommand(const spark::connect::Plan& plan) {
  return plan.has_command() &&
         (plan.command().has_write_operation() || plan.command().has_write_operation_v2());
}

// x-sim-size: small, medium (default) or large: how many tasks the operation's stages have.
eventlog::OperationSize SizeForCall(const grpc::ServerContext& context) {
  const auto size = Header(context, "x-sim-size");
  if (size == "small") return eventlog::OperationSize::kSmall;
  if (size == "large") return eventlog::OperationSize::kLarge;
  return eventlog::OperationSize::kMedium;
}

template <typename Request>
SessionKey KeyOf(const Request& request) {
  return SessionKey{request.user_context().user_id(), request.session_id()};
}

template <typename Request>
std::optional<std::string> ObservedSession(const Request& request) {
  if constexpr (requires { request.has_client_observed_server_side_session_id(); }) {
    if (request.has_client_observed_server_side_session_id())
      return request.client_observed_server_side_session_id();
  }
  return std::nullopt;
}

// Finds (or starts) the request's session, checks the server-side session id the client saw, and
// stamps the response with both session ids, as every Spark Connect response carries them.
template <typename Request, typename Response>
grpc::Status BindSession(ExecutionRegistry& registry, const Request& request, Response* response) {
  std::string server_side_session_id;
  if (auto status = registry.Session(KeyOf(request), ObservedSession(request), &server_side_session_id);
      !status.ok()) {
    return status;
  }
  response->set_session_id(request.session_id());
  response->set_server_side_session_id(server_side_session_id);
  return grpc::Status::OK;
}

grpc::Status OperationNotFound(const std::string& operation_id) {
  return grpc::Status(grpc::StatusCode::INTERNAL, "[INVALID_HANDLE.OPERATION_NOT_FOUND] The handle " +
                                                      operation_id + " is invalid. Operation not found.");
}

}  // namespace

grpc::Status SimService::ExecutePlan(grpc::ServerContext* context,
                                     const spark::connect::ExecutePlanRequest* request,
                                     grpc::ServerWriter<ExecutePlanResponse>* writer) {
  const SessionKey key = KeyOf(*request);
  ExecutionIds ids;
  ids.session_id = request->session_id();
  if (auto status = registry_.Session(key, ObservedSession(*request), &ids.server_side_session_id);
      !status.ok()) {
    return status;
  }
  ExecutionShape shape;
  if (auto status = ShapeForCall(config_, *context, request->client_type(), shape); !status.ok())
    return status;
  bool reattachable = false;
  for (const auto& option : request->request_options()) {
    if (option.has_reattach_options() && option.reattach_options().reattachable()) reattachable = true;
  }
  // Clients name their operations (uuid4) when they want to reattach; otherwise the server does.
  ids.operation_id =
      request->has_operation_id() && !request->operation_id().empty() ? request->operation_id() : NewUuid();
  ids.tags.assign(request->tags().begin(), request->tags().end());
  auto execution = std::make_shared<Execution>(std::move(ids), reattachable, shape);
  if (auto status = registry_.Add(key, execution); !status.ok()) return status;
  spdlog::debug("execute operation={} session={} reattachable={} batches={} progress_steps={}",
                execution->ids().operation_id, key.session_id, reattachable, shape.batches,
                shape.progress_steps);
  if (!event_log_) return Stream(context, writer, key, execution, 0);

  // The event log: the operation's Spark jobs run (in simulated, scaled time) before its results
  // stream, as a query's results follow its jobs; Closed is written when the stream is over.
  eventlog::OperationSpec spec;
  spec.operation_id = execution->ids().operation_id;
  spec.session_id = request->session_id();
  spec.user_id = request->user_context().user_id();
  spec.user_tags.assign(request->tags().begin(), request->tags().end());
  spec.write = IsWriteCommand(request->plan());
  spec.size = SizeForCall(*context);
  spec.statement_text = request->plan().ShortDebugString();
  auto operation = event_log_->Run(spec);
  grpc::Status status;
  if (operation->failed) {
    registry_.Remove(key, spec.operation_id);
    status = grpc::Status(grpc::StatusCode::INTERNAL, "[SPARK_JOB_ABORTED] " + operation->error_message);
  } else {
    status = Stream(context, writer, key, execution, 0);
  }
  event_log_->Close(*operation);
  return status;
}

grpc::Status SimService::ReattachExecute(grpc::ServerContext* context,
                                         const spark::connect::ReattachExecuteRequest* request,
                                         grpc::ServerWriter<ExecutePlanResponse>* writer) {
  const SessionKey key = KeyOf(*request);
  std::string server_side_session_id;
  if (auto status = registry_.Session(key, ObservedSession(*request), &server_side_session_id);
      !status.ok()) {
    return status;
  }
  auto execution = registry_.Find(key, request->operation_id());
  if (!execution) return OperationNotFound(request->operation_id());
  if (!execution->reattachable()) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "[INVALID_HANDLE.OPERATION_NOT_REATTACHABLE] The handle " + request->operation_id() +
                            " is invalid. Operation is not reattachable.");
  }
  std::int64_t start = 0;
  if (request->has_last_response_id()) {
    if (auto status = execution->IndexAfter(request->last_response_id(), &start); !status.ok()) return status;
  }
  spdlog::debug("reattach operation={} from response #{}", request->operation_id(), start);
  return Stream(context, writer, key, execution, start);
}

grpc::Status SimService::Stream(grpc::ServerContext* context, grpc::ServerWriter<ExecutePlanResponse>* writer,
                                const SessionKey& key, const std::shared_ptr<Execution>& execution,
                                std::int64_t start_index) {
  const std::uint64_t attachment = execution->Attach();
  const bool reattachable = execution->reattachable();
  // Only reattachable streams are cut: a client that cannot reattach would lose the rest.
  auto cut_deadline = Execution::Clock::time_point::max();
  if (reattachable && config_.stream_cut_after.count() > 0) {
    cut_deadline = Execution::Clock::now() + config_.stream_cut_after;
  }
  const auto client_gone = [context] { return context->IsCancelled(); };
  const auto finish = [&](grpc::Status status) {
    // A non-reattachable execution cannot be resumed, so it is over when its one stream is.
    if (!reattachable) registry_.Remove(key, execution->ids().operation_id);
    return status;
  };
  std::uint64_t bytes_sent = 0;
  for (std::int64_t index = start_index;; ++index) {
    Execution::Step step = execution->Next(attachment, index, cut_deadline, client_gone);
    switch (step.kind) {
      case Execution::Step::Kind::kResponse:
        break;
      case Execution::Step::Kind::kEnd:
        return finish(grpc::Status::OK);
      case Execution::Step::Kind::kCut:
        spdlog::debug("cut stream of operation={} after {}ms", execution->ids().operation_id,
                      config_.stream_cut_after.count());
        return grpc::Status::OK;
      case Execution::Step::Kind::kError:
        return finish(step.status);
    }
    bytes_sent += step.response.ByteSizeLong();
    if (!writer->Write(step.response)) {
      return finish(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
    }
    if (!reattachable) execution->ReleaseThrough(index);
    const bool more = index + 1 < execution->total_responses();
    const bool cut = reattachable && more &&
                     ((config_.stream_cut_bytes > 0 && bytes_sent >= config_.stream_cut_bytes) ||
                      Execution::Clock::now() >= cut_deadline);
    if (cut) {
      spdlog::debug("cut stream of operation={} after {} bytes", execution->ids().operation_id, bytes_sent);
      return grpc::Status::OK;
    }
  }
}

grpc::Status SimService::ReleaseExecute(grpc::ServerContext* /*context*/,
                                        const spark::connect::ReleaseExecuteRequest* request,
                                        spark::connect::ReleaseExecuteResponse* response) {
  const SessionKey key = KeyOf(*request);
  if (auto status = BindSession(registry_, *request, response); !status.ok()) return status;
  response->set_operation_id(request->operation_id());
  // Releasing an operation that is already gone is not an error: clients release asynchronously
  // and may race with the end of the operation.
  if (request->has_release_all()) {
    registry_.Remove(key, request->operation_id());
  } else if (request->has_release_until()) {
    if (auto execution = registry_.Find(key, request->operation_id())) {
      execution->ReleaseUntil(request->release_until().response_id());
    }
  } else {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "ReleaseExecute needs release_all or release_until");
  }
  return grpc::Status::OK;
}

grpc::Status SimService::Interrupt(grpc::ServerContext* /*context*/,
                                   const spark::connect::InterruptRequest* request,
                                   spark::connect::InterruptResponse* response) {
  const SessionKey key = KeyOf(*request);
  if (auto status = BindSession(registry_, *request, response); !status.ok()) return status;
  using Request = spark::connect::InterruptRequest;
  std::vector<std::string> interrupted;
  switch (request->interrupt_type()) {
    case Request::INTERRUPT_TYPE_ALL:
      interrupted = registry_.Interrupt(key, ExecutionRegistry::InterruptScope::kAll, "");
      break;
    case Request::INTERRUPT_TYPE_TAG:
      interrupted =
          registry_.Interrupt(key, ExecutionRegistry::InterruptScope::kTag, request->operation_tag());
      break;
    case Request::INTERRUPT_TYPE_OPERATION_ID:
      interrupted =
          registry_.Interrupt(key, ExecutionRegistry::InterruptScope::kOperationId, request->operation_id());
      break;
    default:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "sparktrace-sim: unknown interrupt_type");
  }
  for (auto& id : interrupted) response->add_interrupted_ids(std::move(id));
  return grpc::Status::OK;
}

grpc::Status SimService::AnalyzePlan(grpc::ServerContext* /*context*/,
                                     const spark::connect::AnalyzePlanRequest* request,
                                     spark::connect::AnalyzePlanResponse* response) {
  if (auto status = BindSession(registry_, *request, response); !status.ok()) return status;
  constexpr const char* kNoPlan =
      "sparktrace-sim: simulates the Spark Connect protocol; there is no query plan";
  using Request = spark::connect::AnalyzePlanRequest;
  // Every answer is a placeholder of the right shape; nothing is analyzed.
  switch (request->analyze_case()) {
    case Request::kSchema:
      response->mutable_schema();
      break;
    case Request::kExplain:
      response->mutable_explain()->set_explain_string(kNoPlan);
      break;
    case Request::kTreeString:
      response->mutable_tree_string()->set_tree_string(kNoPlan);
      break;
    case Request::kIsLocal:
      response->mutable_is_local()->set_is_local(false);
      break;
    case Request::kIsStreaming:
      response->mutable_is_streaming()->set_is_streaming(false);
      break;
    case Request::kInputFiles:
      response->mutable_input_files();
      break;
    case Request::kSparkVersion:
      response->mutable_spark_version()->set_version(kSparkVersion);
      break;
    case Request::kDdlParse:
      response->mutable_ddl_parse();
      break;
    case Request::kSameSemantics:
      response->mutable_same_semantics()->set_result(false);
      break;
    case Request::kSemanticHash:
      response->mutable_semantic_hash()->set_result(0);
      break;
    case Request::kPersist:
      response->mutable_persist();
      break;
    case Request::kUnpersist:
      response->mutable_unpersist();
      break;
    case Request::kGetStorageLevel:
      response->mutable_get_storage_level();
      break;
    case Request::kJsonToDdl:
      response->mutable_json_to_ddl();
      break;
    default:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "sparktrace-sim: AnalyzePlan without an analyze case");
  }
  return grpc::Status::OK;
}

grpc::Status SimService::Config(grpc::ServerContext* /*context*/,
                                const spark::connect::ConfigRequest* request,
                                spark::connect::ConfigResponse* response) {
  if (auto status = BindSession(registry_, *request, response); !status.ok()) return status;
  // No configuration is stored: gets return no pairs, except that a get with defaults echoes
  // the defaults, which is what a server without those keys set would answer.
  if (request->operation().has_get_with_default()) {
    for (const auto& pair : request->operation().get_with_default().pairs()) *response->add_pairs() = pair;
  }
  return grpc::Status::OK;
}

grpc::Status SimService::AddArtifacts(grpc::ServerContext* context,
                                      grpc::ServerReader<spark::connect::AddArtifactsRequest>* reader,
                                      spark::connect::AddArtifactsResponse* response) {
  spark::connect::AddArtifactsRequest request;
  bool first = true;
  while (reader->Read(&request)) {
    if (first) {
      first = false;
      if (auto status = BindSession(registry_, request, response); !status.ok()) return status;
    }
    // Artifacts are read and dropped; CRCs are not checked but reported as matching.
    if (request.has_batch()) {
      for (const auto& artifact : request.batch().artifacts()) {
        auto* summary = response->add_artifacts();
        summary->set_name(artifact.name());
        summary->set_is_crc_successful(true);
      }
    } else if (request.has_begin_chunk()) {
      auto* summary = response->add_artifacts();
      summary->set_name(request.begin_chunk().name());
      summary->set_is_crc_successful(true);
    }
  }
  if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled");
  return grpc::Status::OK;
}

grpc::Status SimService::ArtifactStatus(grpc::ServerContext* /*context*/,
                                        const spark::connect::ArtifactStatusesRequest* request,
                                        spark::connect::ArtifactStatusesResponse* response) {
  if (auto status = BindSession(registry_, *request, response); !status.ok()) return status;
  // Nothing is stored, so nothing exists.
  for (const auto& name : request->names()) (*response->mutable_statuses())[name].set_exists(false);
  return grpc::Status::OK;
}

grpc::Status SimService::ReleaseSession(grpc::ServerContext* /*context*/,
                                        const spark::connect::ReleaseSessionRequest* request,
                                        spark::connect::ReleaseSessionResponse* response) {
  if (auto status = BindSession(registry_, *request, response); !status.ok()) return status;
  registry_.ReleaseSession(KeyOf(*request));
  return grpc::Status::OK;
}

grpc::Status SimService::FetchErrorDetails(grpc::ServerContext* /*context*/,
                                           const spark::connect::FetchErrorDetailsRequest* request,
                                           spark::connect::FetchErrorDetailsResponse* response) {
  if (auto status = BindSession(registry_, *request, response); !status.ok()) return status;
  // Spark answers an unknown error id with no errors; the simulator keeps no error details.
  return grpc::Status::OK;
}

}  // namespace sparktrace::sim
