#pragma once
// The simulated SparkConnectService: answers every Spark Connect RPC of our proto subset the way
// a Spark Connect server would at the protocol level (sessions, reattachable executions,
// release, interrupt), without running any query. See `sparktrace sim --help`.
//
// Threads: gRPC's synchronous server calls the handlers on its own thread pool; ExecutePlan and
// ReattachExecute block their thread for the life of the stream (fine for a test peer).
// Lifetime: must outlive the grpc::Server it is registered with.

#include "sim/eventlog/live_event_log.h"
#include "sim/execution_registry.h"
#include "sim/sim_config.h"
#include "spark/connect/base.grpc.pb.h"

namespace sparktrace::sim {

class SimService final : public spark::connect::SparkConnectService::Service {
 public:
  // `registry` and `event_log` (null: no event log) must outlive this service.
  SimService(const SimConfig& config, ExecutionRegistry& registry,
             eventlog::LiveEventLog* event_log = nullptr)
      : config_(config), registry_(registry), event_log_(event_log) {}

  grpc::Status ExecutePlan(grpc::ServerContext* context, const spark::connect::ExecutePlanRequest* request,
                           grpc::ServerWriter<spark::connect::ExecutePlanResponse>* writer) override;
  grpc::Status ReattachExecute(grpc::ServerContext* context,
                               const spark::connect::ReattachExecuteRequest* request,
                               grpc::ServerWriter<spark::connect::ExecutePlanResponse>* writer) override;
  grpc::Status ReleaseExecute(grpc::ServerContext* context,
                              const spark::connect::ReleaseExecuteRequest* request,
                              spark::connect::ReleaseExecuteResponse* response) override;
  grpc::Status Interrupt(grpc::ServerContext* context, const spark::connect::InterruptRequest* request,
                         spark::connect::InterruptResponse* response) override;
  grpc::Status AnalyzePlan(grpc::ServerContext* context, const spark::connect::AnalyzePlanRequest* request,
                           spark::connect::AnalyzePlanResponse* response) override;
  grpc::Status Config(grpc::ServerContext* context, const spark::connect::ConfigRequest* request,
                      spark::connect::ConfigResponse* response) override;
  grpc::Status AddArtifacts(grpc::ServerContext* context,
                            grpc::ServerReader<spark::connect::AddArtifactsRequest>* reader,
                            spark::connect::AddArtifactsResponse* response) override;
  grpc::Status ArtifactStatus(grpc::ServerContext* context,
                              const spark::connect::ArtifactStatusesRequest* request,
                              spark::connect::ArtifactStatusesResponse* response) override;
  grpc::Status ReleaseSession(grpc::ServerContext* context,
                              const spark::connect::ReleaseSessionRequest* request,
                              spark::connect::ReleaseSessionResponse* response) override;
  grpc::Status FetchErrorDetails(grpc::ServerContext* context,
                                 const spark::connect::FetchErrorDetailsRequest* request,
                                 spark::connect::FetchErrorDetailsResponse* response) override;

  // Reported by AnalyzePlan(spark_version): a version number clients can parse, marked as ours.
  static constexpr const char* kSparkVersion = "4.0.0-sparktrace-sim";

 private:
  // Sends responses from `start_index` until the execution ends, fails, or the stream is cut.
  grpc::Status Stream(grpc::ServerContext* context,
                      grpc::ServerWriter<spark::connect::ExecutePlanResponse>* writer, const SessionKey& key,
                      const std::shared_ptr<Execution>& execution, std::int64_t start_index);

  const SimConfig& config_;
  ExecutionRegistry& registry_;
  eventlog::LiveEventLog* const event_log_;
};

}  // namespace sparktrace::sim
