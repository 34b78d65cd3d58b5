#include "cli/demo/workload.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>

#include "proxy/status_names.h"
#include "sim/ids.h"
#include "spark/connect/base.grpc.pb.h"

namespace sparktrace::cli::demo {
namespace {

using spark::connect::ExecutePlanRequest;
using spark::connect::ExecutePlanResponse;
using spark::connect::SparkConnectService;

// What the proxy's spans show as spark.connect.client_type and user_id.
constexpr const char* kClientType = "sparktrace-demo (stands in for PySpark in an Airflow task)";
constexpr const char* kUserId = "airflow";
constexpr const char* kQuerySql =
    "SELECT order_id, customer_id, amount FROM sales.orders WHERE order_date = current_date()";
// A stream that never completes must not loop forever; the simulator cuts it once.
constexpr int kMaxReattaches = 3;

using Metadata = std::initializer_list<std::pair<const char*, std::string>>;

// "UNAVAILABLE connection refused". gRPC's C++ codes are the specification's numbers, as the proxy's are.
std::string StatusText(const grpc::Status& status) {
  return fmt::format("{} {}", proxy::StatusCodeName(static_cast<proxy::StatusCode>(status.error_code())),
                     status.error_message());
}

Error CallFailed(std::string_view call, const grpc::Status& status) {
  return Error{ErrorCode::kUnavailable, fmt::format("{}: {}", call, StatusText(status))};
}

std::string Batches(int count) { return fmt::format("{} batch{}", count, count == 1 ? "" : "es"); }

void PrintStep(std::ostream& out, std::string_view call, std::string_view outcome) {
  out << fmt::format("  {:<47} {}\n", call, outcome) << std::flush;
}

// The PySpark session of the task: the ids every request carries and the metadata every call does.
class TaskSession {
 public:
  explicit TaskSession(const DemoWorkloadOptions& options)
      : options_(options), session_id_(sim::NewUuid()), stub_(NewStub()) {}

  SparkConnectService::Stub& stub() { return *stub_; }

  // A stub on a connection of its own. gRPC shares one connection among the channels to a target
  // unless each channel keeps a local subchannel pool, and then "another connection" would not be.
  std::unique_ptr<SparkConnectService::Stub> NewStub() const {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return SparkConnectService::NewStub(
        grpc::CreateCustomChannel(options_.target, grpc::InsecureChannelCredentials(), args));
  }

  // A call's context: the trace and Airflow headers, `extra` (x-sim-* shapes the simulator's
  // answer), and the deadline.
  std::unique_ptr<grpc::ClientContext> NewContext(Metadata extra = {}) const {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("traceparent", options_.traceparent);
    context->AddMetadata(std::string(tracing::kAirflowDagIdHeader), options_.airflow.dag_id);
    context->AddMetadata(std::string(tracing::kAirflowTaskIdHeader), options_.airflow.task_id);
    context->AddMetadata(std::string(tracing::kAirflowRunIdHeader), options_.airflow.run_id);
    context->AddMetadata(std::string(tracing::kAirflowTryNumberHeader),
                         std::to_string(options_.airflow.try_number));
    for (const auto& [key, value] : extra) context->AddMetadata(key, value);
    context->set_deadline(std::chrono::system_clock::now() + options_.call_deadline);
    return context;
  }

  // Fills the fields every Spark Connect request has, as a Spark 4.0 client does: after the first
  // answer, each request names the server-side session it saw.
  template <typename Request>
  void Stamp(Request& request) const {
    request.set_session_id(session_id_);
    request.mutable_user_context()->set_user_id(kUserId);
    request.set_client_type(kClientType);
    if (!server_side_session_id_.empty()) {
      request.set_client_observed_server_side_session_id(server_side_session_id_);
    }
  }

  template <typename Response>
  void Observe(const Response& response) {
    if (!response.server_side_session_id().empty())
      server_side_session_id_ = response.server_side_session_id();
  }

 private:
  const DemoWorkloadOptions& options_;
  const std::string session_id_;
  std::string server_side_session_id_;
  std::unique_ptr<SparkConnectService::Stub> stub_;
};

// What the responses of one ExecutePlan or ReattachExecute stream said, accumulated over streams.
struct StreamProgress {
  int responses = 0;
  int batches = 0;
  std::string last_response_id;
  bool result_complete = false;

  void Add(const ExecutePlanResponse& response) {
    ++responses;
    if (response.has_arrow_batch()) ++batches;
    if (response.has_result_complete()) result_complete = true;
    if (!response.response_id().empty()) last_response_id = response.response_id();
  }
};

grpc::Status Drain(grpc::ClientReaderInterface<ExecutePlanResponse>& reader, TaskSession& session,
                   StreamProgress& progress) {
  ExecutePlanResponse response;
  while (reader.Read(&response)) {
    session.Observe(response);
    progress.Add(response);
  }
  return reader.Finish();
}

ExecutePlanRequest NewExecuteRequest(const TaskSession& session, const std::string& operation_id,
                                     const DemoWorkloadOptions& options, bool reattachable) {
  ExecutePlanRequest request;
  session.Stamp(request);
  request.set_operation_id(operation_id);
  // Spark job tags derive from operation tags: this is how a task finds its jobs in the Spark UI.
  request.add_tags(options.airflow.dag_id + "." + options.airflow.task_id);
  if (reattachable) request.add_request_options()->mutable_reattach_options()->set_reattachable(true);
  return request;
}

Result<void> RunConfigAndAnalyze(TaskSession& session, std::ostream& out) {
  spark::connect::ConfigRequest config;
  session.Stamp(config);
  config.mutable_operation()->mutable_get()->add_keys("spark.sql.session.timeZone");
  spark::connect::ConfigResponse config_response;
  auto status = session.stub().Config(session.NewContext().get(), config, &config_response);
  if (!status.ok()) return CallFailed("Config", status);
  session.Observe(config_response);
  PrintStep(out, "Config get spark.sql.session.timeZone", "OK");

  spark::connect::AnalyzePlanRequest version;
  session.Stamp(version);
  version.mutable_spark_version();
  spark::connect::AnalyzePlanResponse version_response;
  status = session.stub().AnalyzePlan(session.NewContext().get(), version, &version_response);
  if (!status.ok()) return CallFailed("AnalyzePlan (spark_version)", status);
  session.Observe(version_response);
  PrintStep(out, "AnalyzePlan spark_version", version_response.spark_version().version());

  spark::connect::AnalyzePlanRequest schema;
  session.Stamp(schema);
  schema.mutable_schema()->mutable_plan()->mutable_root()->mutable_sql()->set_query(kQuerySql);
  spark::connect::AnalyzePlanResponse schema_response;
  status = session.stub().AnalyzePlan(session.NewContext().get(), schema, &schema_response);
  if (!status.ok()) return CallFailed("AnalyzePlan (schema)", status);
  session.Observe(schema_response);
  PrintStep(out, "AnalyzePlan schema of the query", "OK");
  return {};
}

// The query: reattachable, cut by the simulator, resumed until result_complete, then released.
Result<DemoOperation> RunQuery(TaskSession& session, const DemoWorkloadOptions& options, std::ostream& out) {
  DemoOperation operation{"query", sim::NewUuid(), "completed"};
  ExecutePlanRequest request = NewExecuteRequest(session, operation.operation_id, options, true);
  request.mutable_plan()->mutable_root()->mutable_sql()->set_query(kQuerySql);
  // Three 40KiB batches against the 64KiB cut: the first stream ends after two of them. Before
  // them, the progress a Spark 4 server streams while the query runs (the demo's client does not
  // name a Spark version, so it asks the sim for it): the operation span's progress events.
  auto context = session.NewContext(
      {{"x-sim-batches", "3"}, {"x-sim-batch-bytes", "40960"}, {"x-sim-progress-steps", "4"}});
  StreamProgress progress;
  auto status = Drain(*session.stub().ExecutePlan(context.get(), request), session, progress);
  if (!status.ok()) return CallFailed("ExecutePlan (query)", status);
  PrintStep(out, "ExecutePlan query (reattachable)",
            fmt::format("op {}: {}, {}", operation.operation_id, Batches(progress.batches),
                        progress.result_complete ? "result_complete" : "stream cut before result_complete"));

  for (int reattach = 1; !progress.result_complete; ++reattach) {
    if (reattach > kMaxReattaches || progress.last_response_id.empty()) {
      return Error{ErrorCode::kInternal,
                   fmt::format("ExecutePlan (query): no result_complete after {} reattaches", reattach - 1)};
    }
    // On a new connection, as after a network blip: the proxy still ties it to the operation.
    spark::connect::ReattachExecuteRequest reattach_request;
    session.Stamp(reattach_request);
    reattach_request.set_operation_id(operation.operation_id);
    reattach_request.set_last_response_id(progress.last_response_id);
    const int batches_before = progress.batches;
    auto reattach_stub = session.NewStub();
    auto reattach_context = session.NewContext();
    status =
        Drain(*reattach_stub->ReattachExecute(reattach_context.get(), reattach_request), session, progress);
    if (!status.ok()) return CallFailed("ReattachExecute (query)", status);
    PrintStep(out, "ReattachExecute (new connection)",
              fmt::format("from the last response id: {}, {}", Batches(progress.batches - batches_before),
                          progress.result_complete ? "result_complete" : "cut again"));
  }

  spark::connect::ReleaseExecuteRequest release;
  session.Stamp(release);
  release.set_operation_id(operation.operation_id);
  release.mutable_release_all();
  spark::connect::ReleaseExecuteResponse release_response;
  status = session.stub().ReleaseExecute(session.NewContext().get(), release, &release_response);
  if (!status.ok()) return CallFailed("ReleaseExecute (query)", status);
  session.Observe(release_response);
  PrintStep(out, "ReleaseExecute release_all", "OK");
  return operation;
}

// A write: a command, not reattachable, so it is over when its one stream ends.
Result<DemoOperation> RunWrite(TaskSession& session, const DemoWorkloadOptions& options, std::ostream& out) {
  DemoOperation operation{"write", sim::NewUuid(), "completed"};
  ExecutePlanRequest request = NewExecuteRequest(session, operation.operation_id, options, false);
  request.mutable_plan()->mutable_command()->mutable_write_operation();
  // A command answers with no rows.
  auto context = session.NewContext({{"x-sim-batches", "0"}});
  StreamProgress progress;
  const auto status = Drain(*session.stub().ExecutePlan(context.get(), request), session, progress);
  if (!status.ok()) return CallFailed("ExecutePlan (write)", status);
  PrintStep(out, "ExecutePlan write_operation (not reattachable)", "op " + operation.operation_id + ": OK");
  return operation;
}

// A slow query, interrupted after its first batch by an Interrupt from another connection, the way
// Airflow's on_kill stops a task's Spark work while the task's own call is still streaming.
Result<DemoOperation> RunInterruptedQuery(TaskSession& session, const DemoWorkloadOptions& options,
                                          std::ostream& out) {
  DemoOperation operation{"slow query", sim::NewUuid(), "interrupted"};
  ExecutePlanRequest request = NewExecuteRequest(session, operation.operation_id, options, true);
  request.mutable_plan()->mutable_root()->mutable_sql()->set_query(kQuerySql);
  // 50 batches 250ms apart would take longer than the call's deadline: only the interrupt ends it.
  auto context = session.NewContext({{"x-sim-batches", "50"}, {"x-sim-batch-interval-ms", "250"}});
  auto reader = session.stub().ExecutePlan(context.get(), request);
  ExecutePlanResponse first;
  if (!reader->Read(&first)) return CallFailed("ExecutePlan (slow query)", reader->Finish());
  session.Observe(first);
  PrintStep(out, "ExecutePlan slow query (reattachable)",
            "op " + operation.operation_id + ": first batch arrived");

  spark::connect::InterruptRequest interrupt;
  session.Stamp(interrupt);
  interrupt.set_interrupt_type(spark::connect::InterruptRequest::INTERRUPT_TYPE_OPERATION_ID);
  interrupt.set_operation_id(operation.operation_id);
  spark::connect::InterruptResponse interrupt_response;
  auto interrupt_stub = session.NewStub();
  auto status = interrupt_stub->Interrupt(session.NewContext().get(), interrupt, &interrupt_response);
  if (!status.ok()) return CallFailed("Interrupt (slow query)", status);
  const auto& ids = interrupt_response.interrupted_ids();
  if (std::find(ids.begin(), ids.end(), operation.operation_id) == ids.end()) {
    return Error{ErrorCode::kInternal, "Interrupt (slow query): the server did not interrupt the operation"};
  }
  PrintStep(out, "Interrupt by operation id (new connection)", "interrupted");

  StreamProgress rest;
  status = Drain(*reader, session, rest);
  if (status.ok()) {
    return Error{ErrorCode::kInternal, "ExecutePlan (slow query): finished normally despite the interrupt"};
  }
  PrintStep(out, "ExecutePlan slow query, after the interrupt", StatusText(status));
  return operation;
}

}  // namespace

Result<std::vector<DemoOperation>> RunDemoWorkload(const DemoWorkloadOptions& options, std::ostream& out) {
  TaskSession session(options);
  std::this_thread::sleep_for(options.task_code);  // the task's code before its first Spark call
  if (auto done = RunConfigAndAnalyze(session, out); !done.ok()) return done.error();
  std::vector<DemoOperation> operations;
  for (auto* run : {&RunQuery, &RunWrite, &RunInterruptedQuery}) {
    auto operation = run(session, options, out);
    if (!operation.ok()) return operation.error();
    operations.push_back(std::move(*operation));
    std::this_thread::sleep_for(options.task_code);  // and between (and after) its calls
  }
  return operations;
}

}  // namespace sparktrace::cli::demo
