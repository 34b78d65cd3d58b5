#pragma once
// Shared by the CallTracer tests: the tracer with fakes around it (span sink, sequential ids, a
// metrics registry), one proxied call as the proxy drives its tap, the Spark Connect messages a
// PySpark 4.0 client and a Spark 4.0 server send, and readers of the spans the tracer submits.

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/call_observer.h"
#include "spark/connect/base.pb.h"
#include "spark/connect/commands.pb.h"
#include "spark/connect/relations.pb.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"
#include "tracing/airflow_identity.h"
#include "tracing/connect/spark_connect_tracer.h"
#include "tracing/sampler.h"
#include "tracing/span_sink.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing::connect::call_tracer_testing {

namespace pb = ::spark::connect;
using std::chrono::milliseconds;
using std::chrono::seconds;

using spark_connect::kOperation;
using spark_connect::kServerSession;
using spark_connect::kSession;

inline constexpr char kClientType[] = "_SPARK_CONNECT_PYTHON spark/4.0.0 os/linux python/3.11.2";

inline constexpr char kPeer[] = "ipv4:127.0.0.1:5555";
inline constexpr char kAuthority[] = "proxy:15002";

inline constexpr char kServicePath[] = "/spark.connect.SparkConnectService/";

// W3C's example context.
inline constexpr char kClientTraceId[] = "4bf92f3577b34da6a3ce929d0e0e4736";
inline constexpr char kClientSpanId[] = "00f067aa0ba902b7";
inline constexpr char kClientTraceparent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
inline constexpr char kClientTracestate[] = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

using Headers = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------------------------------------
// Fakes

class RecordingSpanSink final : public SpanSink {
 public:
  void Submit(Span span) override {
    std::lock_guard lock(mu_);
    spans_.push_back(std::move(span));
  }
  // The proxy's own spans are submitted once, when their call or operation ended; the only live
  // ones are snapshots of running operations with Spark 4 progress, which a test must expect.
  void SubmitLive(Span span) override {
    std::lock_guard lock(mu_);
    if (!live_expected_) ADD_FAILURE() << "live span " << span.name;
    live_.push_back(std::move(span));
  }
  void ExpectLive() {
    std::lock_guard lock(mu_);
    live_expected_ = true;
  }
  std::vector<Span> spans() const {
    std::lock_guard lock(mu_);
    return spans_;
  }
  std::vector<Span> live_spans() const {
    std::lock_guard lock(mu_);
    return live_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Span> spans_;
  std::vector<Span> live_;
  bool live_expected_ = false;
};

// Ids that count up, so a test can tell which was handed out and none is ever reused. Trace ids
// start with 0x7e so they cannot be mistaken for the client's or an Airflow-derived one.
class SequentialIdGenerator final : public IdGenerator {
 public:
  TraceId NewTraceId() override {
    TraceId id{};
    id[0] = 0x7e;
    WriteBigEndian(next_trace_++, id.data() + 8);
    return id;
  }
  SpanId NewSpanId() override {
    SpanId id{};
    WriteBigEndian(next_span_++, id.data());
    return id;
  }

 private:
  static void WriteBigEndian(std::uint64_t value, std::uint8_t* out) {
    for (int i = 7; i >= 0; --i, value >>= 8) out[i] = static_cast<std::uint8_t>(value & 0xff);
  }
  std::atomic<std::uint64_t> next_trace_{1};
  std::atomic<std::uint64_t> next_span_{1};
};

// One tracer with everything it needs, recording what it produces.
struct TracerHarness {
  explicit TracerHarness(double sample_ratio)
      : tracer(spans, ids, *Sampler::Create(sample_ratio), metrics, Options()) {}

  static OperationRegistryOptions Options() {
    OperationRegistryOptions options;
    options.sweep_interval = std::chrono::hours(24);  // no background sweep during a test
    // Progress within a test comes microseconds apart: only the first update and the last are
    // kept as events, and only the first is snapshotted, however slow the machine.
    options.progress.event_interval = std::chrono::hours(1);
    options.progress.snapshot_interval = std::chrono::hours(1);
    return options;
  }

  // A counter's, gauge's or histogram's (sample count) value; 0 for a series never touched.
  double Metric(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    for (const prometheus::MetricFamily& family : registry.Collect()) {
      if (family.name != name) continue;
      for (const prometheus::ClientMetric& metric : family.metric) {
        std::map<std::string, std::string> metric_labels;
        for (const auto& label : metric.label) metric_labels[label.name] = label.value;
        if (metric_labels != labels) continue;
        switch (family.type) {
          case prometheus::MetricType::Counter:
            return metric.counter.value;
          case prometheus::MetricType::Gauge:
            return metric.gauge.value;
          case prometheus::MetricType::Histogram:
            return static_cast<double>(metric.histogram.sample_count);
          default:
            return -1;
        }
      }
    }
    return 0;
  }

  RecordingSpanSink spans;
  SequentialIdGenerator ids;
  prometheus::Registry registry;
  TracingMetrics metrics{registry};
  SparkConnectTracer tracer;
};

// `bytes` as the proxy hands a message to a tap, cut into two pieces so that no decode relies on
// one. Points into `bytes`; never copied, as the message points into its own pieces.
class TwoPieces {
 public:
  explicit TwoPieces(const std::string& bytes) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    const std::size_t half = bytes.size() / 2;
    pieces_ = {std::span(data, half), std::span(data + half, bytes.size() - half)};
    message_ = {.wire_bytes = bytes.size(), .compressed = false, .bytes = pieces_, .bytes_available = true};
  }
  TwoPieces(const TwoPieces&) = delete;
  TwoPieces& operator=(const TwoPieces&) = delete;

  const proxy::TappedMessage& message() const { return message_; }

 private:
  std::array<std::span<const std::uint8_t>, 2> pieces_;
  proxy::TappedMessage message_;
};

// One proxied call as the proxy drives its tap. Owns the metadata the CallStart points into.
class Call {
 public:
  // `method` is a SparkConnectService method name, or a full gRPC path starting with '/'.
  Call(proxy::CallObserver& observer, std::string_view method, Headers headers, std::string peer = kPeer)
      : path_(method.starts_with('/') ? std::string(method) : kServicePath + std::string(method)),
        peer_(std::move(peer)),
        headers_(std::move(headers)) {
    for (const auto& [key, value] : headers_) metadata_.emplace(key, value);
    tap_ = observer.OnCallStarted(proxy::CallStart{.method = path_,
                                                   .peer = peer_,
                                                   .authority = kAuthority,
                                                   .client_metadata = metadata_,
                                                   .started_at = started_at_,
                                                   .upstream_headers = upstream_});
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  void Send(const google::protobuf::Message& message) { SendBytes(message.SerializeAsString()); }
  void SendBytes(const std::string& bytes) {
    requests_.messages += 1;
    requests_.bytes += bytes.size();
    tap_->OnRequestMessage(TwoPieces(bytes).message());
  }
  void Receive(const google::protobuf::Message& message) { ReceiveBytes(message.SerializeAsString()); }
  void ReceiveBytes(const std::string& bytes) {
    responses_.messages += 1;
    responses_.bytes += bytes.size();
    tap_->OnResponseMessage(TwoPieces(bytes).message());
  }
  // A message compressed with an encoding the proxy cannot undo: the tap gets its size, no bytes.
  void SendUnreadable(std::uint64_t wire_bytes) {
    CountUnreadable(requests_, wire_bytes);
    tap_->OnRequestMessage(Unreadable(wire_bytes));
  }
  void ReceiveUnreadable(std::uint64_t wire_bytes) {
    CountUnreadable(responses_, wire_bytes);
    tap_->OnResponseMessage(Unreadable(wire_bytes));
  }
  void End(proxy::StatusCode code = proxy::StatusCode::kOk, std::string_view message = {},
           std::chrono::steady_clock::duration duration = milliseconds(40)) {
    proxy::CallEnd end;
    end.code = code;
    end.error_message = message;
    end.duration = duration;
    if (responses_.messages > 0) end.time_to_first_response = milliseconds(3);
    end.requests = requests_;
    end.responses = responses_;
    tap_->OnCallEnded(end);
  }

  bool tapped() const { return tap_ != nullptr; }
  bool NeedsMessageBytes() const { return tap_->NeedsMessageBytes(); }
  const proxy::MessageCount& requests() const { return requests_; }
  const proxy::MessageCount& responses() const { return responses_; }

  // Whether the upstream call gets `key` from the tracer rather than from the client.
  bool Overrides(std::string_view key) const { return upstream_.Overrides(key); }
  // What the tracer set `key` to upstream; nullopt when it removed it (or did not touch it).
  std::optional<std::string> UpstreamValue(std::string_view key) const {
    for (const auto& [entry_key, value] : upstream_.entries()) {
      if (entry_key == key) return value;
    }
    return std::nullopt;
  }
  // The span id named in the upstream traceparent: the RPC span's.
  std::string UpstreamParentId() const {
    const std::string traceparent = UpstreamValue(kTraceparentHeader).value_or("");
    return traceparent.size() == 55 ? traceparent.substr(36, 16) : "";
  }
  std::string UpstreamTraceId() const {
    const std::string traceparent = UpstreamValue(kTraceparentHeader).value_or("");
    return traceparent.size() == 55 ? traceparent.substr(3, 32) : "";
  }

 private:
  static void CountUnreadable(proxy::MessageCount& count, std::uint64_t wire_bytes) {
    count.messages += 1;
    count.bytes += wire_bytes;
    count.undecodable += 1;
  }
  static proxy::TappedMessage Unreadable(std::uint64_t wire_bytes) {
    return {.wire_bytes = wire_bytes, .compressed = true, .bytes = {}, .bytes_available = false};
  }

  std::string path_;
  std::string peer_;
  const Headers headers_;  // never changes after construction: metadata_ points into it
  proxy::ClientMetadata metadata_;
  proxy::UpstreamHeaderOverrides upstream_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  std::unique_ptr<proxy::CallTap> tap_;
  proxy::MessageCount requests_;
  proxy::MessageCount responses_;
};

// ---------------------------------------------------------------------------------------------
// Spark Connect messages, as a PySpark 4.0 client and a Spark 4.0 server send them

inline void SetUser(pb::UserContext* user) {
  user->set_user_id("etl");
  user->set_user_name("airflow");
}

inline pb::ExecutePlanRequest ReattachableSqlCommand() {
  pb::ExecutePlanRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.mutable_plan()->mutable_command()->mutable_sql_command()->mutable_input()->mutable_sql()->set_query(
      "INSERT INTO t SELECT * FROM s");
  request.set_client_type(kClientType);
  request.add_request_options()->mutable_reattach_options()->set_reattachable(true);
  request.set_operation_id(kOperation);
  request.add_tags("airflow_dag=etl_daily");
  request.add_tags("airflow_task=load");
  return request;
}

// A Spark 3.5 `df.collect()`: a root relation, not reattachable, the server picks the id.
inline pb::ExecutePlanRequest Spark35Query() {
  pb::ExecutePlanRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.mutable_plan()->mutable_root()->mutable_sql()->set_query("SELECT 1");
  request.set_client_type("_SPARK_CONNECT_PYTHON spark/3.5.1");
  return request;
}

inline pb::ExecutePlanResponse ResponseOf(const std::string& operation_id, const std::string& response_id) {
  pb::ExecutePlanResponse response;
  response.set_session_id(kSession);
  response.set_server_side_session_id(kServerSession);
  response.set_operation_id(operation_id);
  response.set_response_id(response_id);
  return response;
}

inline pb::ExecutePlanResponse ArrowBatch(std::int64_t rows, std::size_t data_bytes,
                                          const std::string& response_id,
                                          const std::string& operation_id = kOperation) {
  pb::ExecutePlanResponse response = ResponseOf(operation_id, response_id);
  response.mutable_arrow_batch()->set_row_count(rows);
  response.mutable_arrow_batch()->set_data(std::string(data_bytes, '\xAB'));
  return response;
}

inline pb::ExecutePlanResponse ResultComplete(const std::string& response_id,
                                              const std::string& operation_id = kOperation) {
  pb::ExecutePlanResponse response = ResponseOf(operation_id, response_id);
  response.mutable_result_complete();
  return response;
}

// Spark 4's execution_progress: one stage of `tasks` tasks, `done` of them completed.
inline pb::ExecutePlanResponse Progress(std::int64_t done, std::int64_t tasks, const std::string& response_id,
                                        const std::string& operation_id = kOperation) {
  pb::ExecutePlanResponse response = ResponseOf(operation_id, response_id);
  auto* progress = response.mutable_execution_progress();
  auto* stage = progress->add_stages();
  stage->set_stage_id(3);
  stage->set_num_tasks(tasks);
  stage->set_num_completed_tasks(done);
  stage->set_input_bytes_read(done * 1000);
  stage->set_done(done == tasks);
  progress->set_num_inflight_tasks(tasks - done);
  return response;
}

inline pb::ReattachExecuteRequest Reattach(const std::string& last_response_id) {
  pb::ReattachExecuteRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_operation_id(kOperation);
  request.set_client_type(kClientType);
  request.set_last_response_id(last_response_id);
  return request;
}

inline pb::ReleaseExecuteRequest ReleaseAll() {
  pb::ReleaseExecuteRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_operation_id(kOperation);
  request.set_client_type(kClientType);
  request.mutable_release_all();
  return request;
}

inline pb::ReleaseExecuteResponse Released() {
  pb::ReleaseExecuteResponse response;
  response.set_session_id(kSession);
  response.set_operation_id(kOperation);
  response.set_server_side_session_id(kServerSession);
  return response;
}

inline pb::AnalyzePlanRequest SparkVersionRequest() {
  pb::AnalyzePlanRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_client_type(kClientType);
  request.mutable_spark_version();
  return request;
}

// ---------------------------------------------------------------------------------------------
// Reading spans

inline const Attribute* FindAttribute(const std::vector<Attribute>& attributes, std::string_view key) {
  for (const Attribute& attribute : attributes) {
    if (attribute.key == key) return &attribute;
  }
  return nullptr;
}

template <typename T>
inline std::optional<T> AttributeAs(const std::vector<Attribute>& attributes, std::string_view key) {
  const Attribute* attribute = FindAttribute(attributes, key);
  if (attribute == nullptr || !std::holds_alternative<T>(attribute->value)) return std::nullopt;
  return std::get<T>(attribute->value);
}

inline std::optional<std::string> StringAttribute(const Span& span, std::string_view key) {
  return AttributeAs<std::string>(span.attributes, key);
}
inline std::optional<std::int64_t> IntAttribute(const Span& span, std::string_view key) {
  return AttributeAs<std::int64_t>(span.attributes, key);
}
inline std::optional<bool> BoolAttribute(const Span& span, std::string_view key) {
  return AttributeAs<bool>(span.attributes, key);
}
inline std::optional<double> DoubleAttribute(const Span& span, std::string_view key) {
  return AttributeAs<double>(span.attributes, key);
}
inline std::optional<std::vector<std::string>> StringsAttribute(const Span& span, std::string_view key) {
  return AttributeAs<std::vector<std::string>>(span.attributes, key);
}

inline const SpanEvent* FindEvent(const Span& span, std::string_view name) {
  for (const SpanEvent& event : span.events) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

inline std::vector<std::string> EventNames(const Span& span) {
  std::vector<std::string> names;
  for (const SpanEvent& event : span.events) names.push_back(event.name);
  return names;
}

inline std::vector<Span> SpansNamed(const std::vector<Span>& spans, std::string_view name) {
  std::vector<Span> named;
  for (const Span& span : spans) {
    if (span.name == name) named.push_back(span);
  }
  return named;
}

// The one span named `name`; fails the test (and returns an empty span) if there is not exactly one.
inline Span OnlySpanNamed(const std::vector<Span>& spans, std::string_view name) {
  std::vector<Span> named = SpansNamed(spans, name);
  EXPECT_EQ(named.size(), 1u) << name;
  return named.empty() ? Span{} : named.front();
}

inline std::string RpcName(std::string_view method) {
  return "spark.connect.SparkConnectService/" + std::string(method);
}

inline constexpr char kOperationSpan[] = "spark_connect.operation";

// Every string a span carries anywhere: for "this must never be recorded" checks.
inline std::vector<std::string> EveryString(const Span& span) {
  std::vector<std::string> strings = {span.name, span.trace_state, span.status_message};
  auto add = [&](const std::vector<Attribute>& attributes) {
    for (const Attribute& attribute : attributes) {
      strings.push_back(attribute.key);
      if (const auto* text = std::get_if<std::string>(&attribute.value)) strings.push_back(*text);
      if (const auto* texts = std::get_if<std::vector<std::string>>(&attribute.value)) {
        strings.insert(strings.end(), texts->begin(), texts->end());
      }
    }
  };
  add(span.attributes);
  for (const SpanEvent& event : span.events) {
    strings.push_back(event.name);
    add(event.attributes);
  }
  return strings;
}

class CallTracerTest : public testing::Test {
 protected:
  std::vector<Span> spans() const { return harness_.spans.spans(); }
  double Metric(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    return harness_.Metric(name, labels);
  }

  TracerHarness harness_{1.0};
  SparkConnectTracer& tracer_ = harness_.tracer;
};

}  // namespace sparktrace::tracing::connect::call_tracer_testing
