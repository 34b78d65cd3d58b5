#include "stream_client.h"

#include "channels.h"
#include "payload.h"
#include "process.h"
#include "protocol.h"
#include "stats.h"

#include <grpcpp/alarm.h>
#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sparktrace::loadgen {
namespace {

using Clock = std::chrono::steady_clock;

// A call to another method with a fixed request (--request-file); null for /bench.Load/Stream.
struct CustomCall {
  std::string method;
  std::unique_ptr<FixedRequest> request;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// --progress-bytes: bytes read by every call of the run so far, reported to stderr each time
// another `every` bytes have come in, so that a caller can tell how far a long call has got.
class Progress {
 public:
  explicit Progress(std::int64_t every) : every_(every), next_(every), start_(Clock::now()) {}

  void Add(std::int64_t bytes) {
    if (every_ <= 0) return;
    std::lock_guard lock(mu_);
    total_ += bytes;
    if (total_ < next_) return;
    next_ = (total_ / every_ + 1) * every_;
    std::fprintf(stderr, "progress %lld %.3f\n", static_cast<long long>(total_),
                 std::chrono::duration<double>(Clock::now() - start_).count());
    std::fflush(stderr);
  }

 private:
  const std::int64_t every_;
  std::mutex mu_;
  std::int64_t total_ = 0;  // guarded by mu_
  std::int64_t next_;       // guarded by mu_
  const Clock::time_point start_;
};

// One phase (warm-up or measured) of the run.
struct Phase {
  const CustomCall* custom = nullptr;
  Progress* progress = nullptr;
  std::int64_t read_bytes_per_s = 0;  // --read-bytes-per-s, per call
  std::int64_t messages = 0;         // per call
  std::int64_t message_bytes = 0;
  Clock::time_point issue_until;     // no new call starts after this
  std::atomic<std::int64_t> budget{0};  // calls left (counted for every phase)

  std::mutex mu;
  std::condition_variable cv;
  int active = 0;
  std::int64_t bytes = 0, received = 0, calls = 0, errors = 0;  // guarded by mu
  Clock::time_point last_done;                                  // guarded by mu
  std::string first_error;                                      // guarded by mu
  std::vector<float> latencies_us;                              // successful calls; guarded by mu
};

constexpr std::int64_t kMaxStreamErrors = 20;

class StreamCall;

class StreamWorker {
 public:
  StreamWorker(Phase* phase, grpc::GenericStub* stub, double call_timeout_s)
      : phase_(phase), stub_(stub), call_timeout_s_(call_timeout_s) {}
  void Issue();
  void OnCallDone(std::int64_t bytes, std::int64_t received, const grpc::Status& status,
                  Clock::time_point started);

 private:
  Phase* phase_;
  grpc::GenericStub* stub_;
  double call_timeout_s_;
};

// A server-streaming call expressed as a generic bidi call: one request message, half-close,
// then read until the server finishes.
//
// With --read-bytes-per-s the next read is started only once the call's average read rate
// since it started is back at the cap, from an alarm. No read is pending until then, so gRPC
// stops granting the sender HTTP/2 flow-control window once its receive buffer is used up, and
// the backpressure reaches the sender (through a proxy, the proxy and then the upstream).
class StreamCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  StreamCall(StreamWorker* worker, grpc::GenericStub* stub, const Phase& phase, double call_timeout_s)
      : worker_(worker),
        started_(Clock::now()),
        progress_(phase.progress),
        read_bytes_per_s_(phase.read_bytes_per_s) {
    context_.set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<std::int64_t>(call_timeout_s * 1000)));
    std::string method = kStreamMethod;
    if (phase.custom != nullptr) {
      for (const auto& [key, value] : phase.custom->metadata) context_.AddMetadata(key, value);
      request_ = phase.custom->request->Next();
      if (!phase.custom->method.empty()) method = phase.custom->method;
    } else {
      context_.AddMetadata(kMessagesKey, std::to_string(phase.messages));
      context_.AddMetadata(kMessageBytesKey, std::to_string(phase.message_bytes));
      std::string params = std::to_string(phase.messages) + " " + std::to_string(phase.message_bytes);
      grpc::Slice slice(params);
      request_ = grpc::ByteBuffer(&slice, 1);
    }
    stub->PrepareBidiStreamingCall(&context_, method, grpc::StubOptions(), this);
    // Paced reads are started from an alarm, outside the reactions: hold the call open until
    // the read flow has ended (a read that is not ok).
    if (read_bytes_per_s_ > 0) AddHold();
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&response_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      if (read_bytes_per_s_ > 0) RemoveHold();
      return;
    }
    const auto length = static_cast<std::int64_t>(response_.Length());
    bytes_ += length;
    ++received_;
    response_.Clear();
    if (progress_ != nullptr) progress_->Add(length);
    if (read_bytes_per_s_ > 0) {
      // When the bytes read so far are due at the capped rate.
      const auto due = started_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                      static_cast<double>(bytes_) / static_cast<double>(read_bytes_per_s_)));
      const auto wait = due - Clock::now();
      if (wait > std::chrono::microseconds(50)) {
        // A fresh alarm per wait; the previous one has fired (its callback started this read)
        // and is safe to destroy. The callback must not touch `this` after StartRead: the read
        // can complete, the hold go and OnDone delete the call before the callback returns.
        alarm_ = std::make_unique<grpc::Alarm>();
        alarm_->Set(std::chrono::system_clock::now() + wait, [this](bool) { StartRead(&response_); });
        return;
      }
    }
    StartRead(&response_);
  }

  void OnDone(const grpc::Status& status) override {
    worker_->OnCallDone(bytes_, received_, status, started_);
    delete this;
  }

 private:
  StreamWorker* worker_;
  const Clock::time_point started_;
  Progress* const progress_;
  const std::int64_t read_bytes_per_s_;
  std::unique_ptr<grpc::Alarm> alarm_;
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::int64_t bytes_ = 0;
  std::int64_t received_ = 0;
};

void StreamWorker::Issue() {
  bool more = Clock::now() < phase_->issue_until &&
              phase_->budget.fetch_sub(1, std::memory_order_relaxed) > 0;
  if (more) {
    std::lock_guard lock(phase_->mu);
    more = phase_->errors < kMaxStreamErrors;
  }
  if (!more) {
    std::lock_guard lock(phase_->mu);
    if (--phase_->active == 0) phase_->cv.notify_all();
    return;
  }
  new StreamCall(this, stub_, *phase_, call_timeout_s_);
}

void StreamWorker::OnCallDone(std::int64_t bytes, std::int64_t received, const grpc::Status& status,
                              Clock::time_point started) {
  const auto now = Clock::now();
  {
    std::lock_guard lock(phase_->mu);
    phase_->bytes += bytes;
    phase_->received += received;
    ++phase_->calls;
    phase_->last_done = now;
    std::string problem;
    if (!status.ok()) {
      problem = std::to_string(status.error_code()) + ": " + status.error_message();
    } else if (received != phase_->messages) {
      problem = "short stream: " + std::to_string(received) + " of " + std::to_string(phase_->messages);
    }
    if (!problem.empty()) {
      ++phase_->errors;
      if (phase_->first_error.empty()) phase_->first_error = problem;
    } else {
      phase_->latencies_us.push_back(
          static_cast<float>(std::chrono::duration<double, std::micro>(now - started).count()));
    }
  }
  Issue();
}

// Runs one phase with one worker per --concurrency; false if calls were still running after
// `wait_s` (the caller must then exit without destroying the workers).
bool RunPhase(Phase* phase, const std::vector<std::unique_ptr<grpc::GenericStub>>& stubs,
              const ClientOptions& options, std::vector<std::unique_ptr<StreamWorker>>* workers,
              double wait_s) {
  phase->active = options.concurrency;
  for (int i = 0; i < options.concurrency; ++i) {
    workers->push_back(std::make_unique<StreamWorker>(
        phase, stubs[static_cast<std::size_t>(i / options.streams_per_channel)].get(),
        options.call_timeout_s));
  }
  for (auto& worker : *workers) worker->Issue();
  std::unique_lock lock(phase->mu);
  return phase->cv.wait_for(lock, std::chrono::milliseconds(static_cast<std::int64_t>(wait_s * 1000)),
                            [&] { return phase->active == 0; });
}

}  // namespace

int RunStreamClient(const ClientOptions& options) {
  auto stubs = ConnectStubs(options, "stream");
  if (stubs.empty()) return 2;
  const double cpu_before = OwnCpuSeconds();
  const double wait_s = options.duration_s + options.call_timeout_s + 5;
  std::unique_ptr<CustomCall> custom;
  if (options.custom_request()) {
    custom = std::make_unique<CustomCall>();
    custom->method = options.method;
    custom->request = std::make_unique<FixedRequest>(options.request, options.fresh_uuid);
    custom->metadata = options.metadata;
  }

  Progress progress(options.progress_bytes);

  // Warm-up: one short call per worker (connection windows, allocator, proxy upstream pools).
  Phase warmup;
  warmup.custom = custom.get();
  warmup.progress = &progress;
  warmup.read_bytes_per_s = options.read_bytes_per_s;
  // A fixed request cannot ask for fewer messages: the warm-up expects the same count then.
  warmup.messages = custom ? options.messages : std::min<std::int64_t>(options.messages, 4);
  warmup.message_bytes = options.message_bytes;
  warmup.issue_until = Clock::now() + std::chrono::hours(1);
  warmup.budget = options.concurrency;
  std::vector<std::unique_ptr<StreamWorker>> warmup_workers;
  if (!RunPhase(&warmup, stubs, options, &warmup_workers, wait_s)) {
    JsonLine().Add("mode", "stream").Add("error", "warm-up calls did not finish").Print();
    std::_Exit(3);
  }

  Phase measured;
  measured.custom = custom.get();
  measured.progress = &progress;
  measured.read_bytes_per_s = options.read_bytes_per_s;
  measured.messages = options.messages;
  measured.message_bytes = options.message_bytes;
  const auto start = Clock::now();
  measured.issue_until =
      start + std::chrono::milliseconds(static_cast<std::int64_t>(options.duration_s * 1000));
  measured.budget = options.calls > 0 ? options.calls : (std::int64_t{1} << 40);
  std::vector<std::unique_ptr<StreamWorker>> workers;
  if (!RunPhase(&measured, stubs, options, &workers, wait_s)) {
    JsonLine().Add("mode", "stream").Add("error", "stream calls still running after the deadline").Print();
    std::_Exit(3);
  }
  const double cpu_s = OwnCpuSeconds() - cpu_before;
  const double elapsed = std::chrono::duration<double>(measured.last_done - start).count();

  JsonLine line;
  line.Add("mode", "stream")
      .Add("target", options.target)
      .Add("concurrency", options.concurrency)
      .Add("channels", static_cast<int>(stubs.size()))
      .Add("message_bytes", options.message_bytes)
      .Add("messages_per_call", options.messages)
      .Add("calls", measured.calls)
      .Add("messages", measured.received)
      .Add("bytes", measured.bytes)
      .Add("bytes_total", measured.bytes + warmup.bytes)
      .Add("elapsed_s", elapsed)
      .Add("bytes_per_s", elapsed > 0 ? static_cast<double>(measured.bytes) / elapsed : 0.0)
      .Add("errors", measured.errors + warmup.errors)
      .Add("client_cpu_s", cpu_s);
  if (options.read_bytes_per_s > 0) line.Add("read_bytes_per_s_cap", options.read_bytes_per_s);
  if (custom) {
    // Per-call figures for calls that are operations (e.g. Spark Connect ExecutePlan).
    LatencySummary summary = Summarize(measured.latencies_us);
    line.Add("method", options.method.empty() ? std::string(kStreamMethod) : options.method)
        .Add("request_bytes", static_cast<std::int64_t>(options.request.size()))
        .Add("calls_total", measured.calls + warmup.calls)
        .Add("calls_per_s", elapsed > 0 ? static_cast<double>(measured.calls) / elapsed : 0.0)
        .Add("p50_us", summary.p50_us)
        .Add("p90_us", summary.p90_us)
        .Add("p99_us", summary.p99_us)
        .Add("max_us", summary.max_us)
        .Add("mean_us", summary.mean_us);
  }
  std::string first_error = warmup.first_error.empty() ? measured.first_error : warmup.first_error;
  if (!first_error.empty()) line.Add("first_error", first_error);
  line.Print();
  return measured.errors + warmup.errors == 0 && measured.bytes > 0 ? 0 : 3;
}

}  // namespace sparktrace::loadgen
