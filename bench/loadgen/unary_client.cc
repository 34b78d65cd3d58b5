#include "unary_client.h"

#include "channels.h"
#include "payload.h"
#include "process.h"
#include "protocol.h"
#include "stats.h"

#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sparktrace::loadgen {
namespace {

using Clock = std::chrono::steady_clock;

// Shared state of one run. Workers only touch their own fields, except for the counters here.
struct Run {
  Clock::time_point measure_start;             // calls started before this are warm-up
  std::atomic<Clock::time_point> stop_at{};    // calls completing after this are not counted
  std::atomic<bool> stopping{false};
  std::atomic<std::int64_t> budget{0};         // calls left when --calls is set
  bool by_count = false;
  std::atomic<std::int64_t> errors{0};
  std::atomic<std::int64_t> calls_total{0};
  std::mutex mu;
  std::condition_variable cv;
  int active = 0;                              // workers with a call in flight or about to issue
  std::string first_error;                     // guarded by mu
};

constexpr std::int64_t kMaxUnaryErrors = 100;  // give up early instead of spinning on failures

// What every call sends: the method, the request (fixed, or a fresh copy per call from `fixed`)
// and extra metadata.
struct CallShape {
  std::string method = kUnaryMethod;
  grpc::ByteBuffer request;
  const FixedRequest* fixed = nullptr;  // set when each call needs its own request copy
  std::vector<std::pair<std::string, std::string>> metadata;
};

class UnaryWorker {
 public:
  UnaryWorker(Run* run, grpc::GenericStub* stub, const CallShape* shape, double call_timeout_s)
      : run_(run),
        stub_(stub),
        shape_(shape),
        request_(shape->request),
        call_timeout_(std::chrono::milliseconds(static_cast<std::int64_t>(call_timeout_s * 1000))) {
    latencies_.reserve(1 << 16);
  }

  void Issue() {
    if (run_->stopping.load(std::memory_order_relaxed) ||
        (run_->by_count && run_->budget.fetch_sub(1, std::memory_order_relaxed) <= 0)) {
      Done();
      return;
    }
    context_ = std::make_unique<grpc::ClientContext>();
    context_->set_deadline(std::chrono::system_clock::now() + call_timeout_);
    for (const auto& [key, value] : shape_->metadata) context_->AddMetadata(key, value);
    if (shape_->fixed != nullptr) request_ = shape_->fixed->Next();
    response_.Clear();
    started_ = Clock::now();
    stub_->UnaryCall(context_.get(), shape_->method, grpc::StubOptions(), &request_, &response_,
                     [this](grpc::Status status) { OnComplete(status); });
  }

  std::vector<float>& latencies() { return latencies_; }
  std::int64_t window_calls() const { return window_calls_; }

 private:
  void OnComplete(const grpc::Status& status) {
    auto now = Clock::now();
    run_->calls_total.fetch_add(1, std::memory_order_relaxed);
    if (!status.ok()) {
      if (run_->errors.fetch_add(1) + 1 >= kMaxUnaryErrors) run_->stopping = true;
      std::lock_guard lock(run_->mu);
      if (run_->first_error.empty()) {
        run_->first_error = std::to_string(status.error_code()) + ": " + status.error_message();
      }
    } else if (started_ >= run_->measure_start) {
      latencies_.push_back(
          static_cast<float>(std::chrono::duration<double, std::micro>(now - started_).count()));
      if (now <= run_->stop_at.load(std::memory_order_relaxed)) ++window_calls_;
    }
    Issue();
  }

  void Done() {
    std::lock_guard lock(run_->mu);
    if (--run_->active == 0) run_->cv.notify_all();
  }

  Run* run_;
  grpc::GenericStub* stub_;
  const CallShape* shape_;
  grpc::ByteBuffer request_;
  const std::chrono::milliseconds call_timeout_;
  std::unique_ptr<grpc::ClientContext> context_;
  grpc::ByteBuffer response_;
  Clock::time_point started_;
  std::vector<float> latencies_;
  std::int64_t window_calls_ = 0;
};

}  // namespace

int RunUnaryClient(const ClientOptions& options) {
  auto stubs = ConnectStubs(options, "unary");
  if (stubs.empty()) return 2;

  CallShape shape;
  std::unique_ptr<FixedRequest> fixed;
  if (options.custom_request()) {
    fixed = std::make_unique<FixedRequest>(options.request, options.fresh_uuid);
    shape.request = fixed->Next();
    if (!options.fresh_uuid.empty()) shape.fixed = fixed.get();
  } else {
    shape.request = SharedPayload(static_cast<std::size_t>(options.request_bytes));
  }
  if (!options.method.empty()) shape.method = options.method;
  shape.metadata = options.metadata;
  Run run;
  run.by_count = options.calls > 0;
  run.budget = options.calls;
  const auto start = Clock::now();
  const auto ms = [](double s) { return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000)); };
  const double warmup_s = run.by_count && !options.warmup_given ? 0.0 : options.warmup_s;
  run.measure_start = start + ms(warmup_s);
  // With --calls the run ends when the budget is spent; --duration then only caps it.
  const double cap_s = run.by_count ? options.duration_s : warmup_s + options.duration_s;
  run.stop_at = start + ms(cap_s);
  const double cpu_before = OwnCpuSeconds();

  std::vector<std::unique_ptr<UnaryWorker>> workers;
  for (int i = 0; i < options.concurrency; ++i) {
    auto* stub = stubs[static_cast<std::size_t>(i / options.streams_per_channel)].get();
    workers.push_back(std::make_unique<UnaryWorker>(&run, stub, &shape, options.call_timeout_s));
  }
  run.active = options.concurrency;
  for (auto& worker : workers) worker->Issue();

  {
    std::unique_lock lock(run.mu);
    run.cv.wait_until(lock, run.stop_at.load(), [&] { return run.active == 0; });
  }
  auto stopped = Clock::now();
  run.stop_at = stopped;
  run.stopping = true;
  bool drained;
  {
    std::unique_lock lock(run.mu);
    drained = run.cv.wait_for(lock, ms(options.call_timeout_s + 5), [&] { return run.active == 0; });
  }
  const double cpu_s = OwnCpuSeconds() - cpu_before;
  if (!drained) {
    JsonLine().Add("mode", "unary").Add("error", "calls still in flight after the deadline").Print();
    std::_Exit(3);  // the workers are still referenced by gRPC callbacks
  }

  std::vector<float> all;
  std::int64_t window_calls = 0;
  for (auto& worker : workers) {
    all.insert(all.end(), worker->latencies().begin(), worker->latencies().end());
    window_calls += worker->window_calls();
  }
  const double window_s =
      std::chrono::duration<double>(stopped - std::min(run.measure_start, stopped)).count();
  LatencySummary summary = Summarize(all);
  JsonLine line;
  line.Add("mode", "unary")
      .Add("target", options.target)
      .Add("concurrency", options.concurrency)
      .Add("channels", static_cast<int>(stubs.size()))
      .Add("request_bytes", options.custom_request() ? static_cast<int>(options.request.size())
                                                     : options.request_bytes)
      .Add("window_s", window_s)
      .Add("calls", static_cast<std::int64_t>(summary.count))
      .Add("calls_total", run.calls_total.load())
      .Add("errors", run.errors.load())
      .Add("calls_per_s", window_s > 0 ? static_cast<double>(window_calls) / window_s : 0.0)
      .Add("p50_us", summary.p50_us)
      .Add("p90_us", summary.p90_us)
      .Add("p99_us", summary.p99_us)
      .Add("max_us", summary.max_us)
      .Add("mean_us", summary.mean_us)
      .Add("client_cpu_s", cpu_s);
  if (!options.method.empty()) line.Add("method", options.method);
  {
    std::lock_guard lock(run.mu);
    if (!run.first_error.empty()) line.Add("first_error", run.first_error);
  }
  line.Print();
  return run.errors.load() == 0 && summary.count > 0 ? 0 : 3;
}

}  // namespace sparktrace::loadgen
