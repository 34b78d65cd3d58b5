#include "idle_client.h"

#include "channels.h"
#include "process.h"
#include "protocol.h"
#include "stats.h"

#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace sparktrace::loadgen {
namespace {

using Clock = std::chrono::steady_clock;

struct Tally {
  std::mutex mu;
  std::condition_variable cv;
  int established = 0, failed = 0, done = 0;
  std::string first_error;
};

class IdleCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  IdleCall(grpc::GenericStub* stub, Tally* tally, double max_life_s) : tally_(tally) {
    // A deadline well past --hold-max keeps every stream bounded even if cancellation is lost.
    context_.set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<std::int64_t>(max_life_s * 1000)));
    stub->PrepareBidiStreamingCall(&context_, kIdleMethod, grpc::StubOptions(), this);
  }

  void Start() { StartCall(); }
  void Cancel() { context_.TryCancel(); }

  void OnReadInitialMetadataDone(bool ok) override {
    std::lock_guard lock(tally_->mu);
    ++(ok ? tally_->established : tally_->failed);
    tally_->cv.notify_all();
  }

  void OnDone(const grpc::Status& status) override {
    std::lock_guard lock(tally_->mu);
    ++tally_->done;
    if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED && tally_->first_error.empty()) {
      tally_->first_error = std::to_string(status.error_code()) + ": " + status.error_message();
    }
    tally_->cv.notify_all();
  }

 private:
  Tally* tally_;
  grpc::ClientContext context_;
};

}  // namespace

int RunIdleClient(const ClientOptions& options, int signal_fd) {
  auto stubs = ConnectStubs(options, "idle");
  if (stubs.empty()) return 2;

  Tally tally;
  const int n = options.concurrency;
  const double max_life_s = options.establish_timeout_s + options.hold_max_s + 60;
  std::vector<std::unique_ptr<IdleCall>> calls;
  calls.reserve(static_cast<std::size_t>(n));
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    calls.push_back(std::make_unique<IdleCall>(
        stubs[static_cast<std::size_t>(i / options.streams_per_channel)].get(), &tally, max_life_s));
    calls.back()->Start();
  }
  int established, failed;
  {
    std::unique_lock lock(tally.mu);
    tally.cv.wait_for(lock, std::chrono::milliseconds(static_cast<std::int64_t>(options.establish_timeout_s * 1000)),
                      [&] { return tally.established + tally.failed >= n; });
    established = tally.established;
    failed = tally.failed;
  }
  const double establish_s = std::chrono::duration<double>(Clock::now() - start).count();
  JsonLine line;
  line.Add("mode", "idle")
      .Add("target", options.target)
      .Add("streams", n)
      .Add("channels", static_cast<int>(stubs.size()))
      .Add("established", established)
      .Add("failed", failed)
      .Add("establish_s", establish_s);
  {
    std::lock_guard lock(tally.mu);
    if (!tally.first_error.empty()) line.Add("first_error", tally.first_error);
  }
  line.Print();

  WakeReason why = WaitForSignalOrEof(signal_fd, /*watch_stdin=*/true, options.hold_max_s);
  std::fprintf(stderr, "sparktrace-loadgen: releasing idle streams (%s)\n", WakeReasonName(why));
  for (auto& call : calls) call->Cancel();
  bool all_done;
  {
    std::unique_lock lock(tally.mu);
    all_done = tally.cv.wait_for(lock, std::chrono::seconds(10), [&] { return tally.done >= n; });
  }
  if (!all_done) std::_Exit(3);  // calls still reference their reactors
  return established == n ? 0 : 3;
}

}  // namespace sparktrace::loadgen
