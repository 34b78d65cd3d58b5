#pragma once
// The process-wide budget for the bytes the relay may hold, and the per-stream receive windows
// drawn from it.
//
// A peer may only send what the proxy's HTTP/2 receive window for the stream allows, and the
// proxy reopens that window only once the bytes have been passed on (application flow control,
// see Http2Connection). So the window a stream has been granted is an upper bound of what it can
// make the proxy hold: the budget counts granted windows, not bytes that happen to be queued,
// and what it bounds is therefore a guarantee, whatever the peers do.
//
// Every stream starts with a small window (--initial-stream-window, taken from the budget
// unconditionally: SETTINGS announced it before the stream existed). A window doubles, up to
// --stream-window, only when the stream's sender has used a whole window and the receiving side
// has taken everything queued (the window, not the reader, is what holds the stream back) and the
// budget has the bytes. A client that never reads therefore never grows its windows, and once the
// budget is spent streams keep the window they have: Spark slows down, the proxy does not grow.
// The bytes a tap keeps of an incomplete message (MessageTapper) are taken from the same budget.
// What one client connection's calls grow their windows by also comes out of its ConnectionShare,
// so that one client (a slow reader of many streams) cannot take the whole budget from the others.
//
// Threads: RelayBudget is shared by every worker (atomics); a ConnectionShare belongs to one
// client connection and a StreamWindow to one call, both on the connection's worker.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace sparktrace::proxy {

class RelayBudget {
 public:
  explicit RelayBudget(std::size_t limit_bytes) : limit_(limit_bytes) {}
  RelayBudget(const RelayBudget&) = delete;
  RelayBudget& operator=(const RelayBudget&) = delete;

  // Takes `bytes` if the budget still has them; counts a refusal otherwise.
  bool TryTake(std::size_t bytes);
  // Takes `bytes` whatever the balance (windows a peer already holds cannot be refused).
  void Take(std::size_t bytes);
  void Give(std::size_t bytes);

  std::size_t limit() const { return limit_; }
  std::size_t taken() const { return taken_.load(std::memory_order_relaxed); }
  std::size_t high_water() const { return high_water_.load(std::memory_order_relaxed); }
  std::uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  void NoteHighWater(std::size_t taken);

  const std::size_t limit_;
  std::atomic<std::size_t> taken_{0};
  std::atomic<std::size_t> high_water_{0};
  std::atomic<std::uint64_t> refusals_{0};
};

// One client connection's part of the budget: what its calls' windows have grown by, both ways.
class ConnectionShare {
 public:
  explicit ConnectionShare(std::size_t limit_bytes) : limit_(limit_bytes) {}
  bool TryTake(std::size_t bytes) {
    if (taken_ + bytes > limit_) return false;
    taken_ += bytes;
    return true;
  }
  void Give(std::size_t bytes) { taken_ -= bytes; }
  std::size_t taken() const { return taken_; }

 private:
  const std::size_t limit_;
  std::size_t taken_ = 0;
};

// Why a window could not grow (for the limit counters).
enum class GrowthRefusal { kNone, kConnectionShare, kBudget };

struct WindowSizes {
  std::int32_t initial = 64 * 1024;  // what SETTINGS_INITIAL_WINDOW_SIZE announces
  std::int32_t max = 4 << 20;        // the most one stream may be granted
};

// One stream direction's receive window: its size, and the budget it was taken from.
class StreamWindow {
 public:
  // `share`: the client connection's; null for none (unit tests).
  StreamWindow(RelayBudget& budget, std::shared_ptr<ConnectionShare> share, WindowSizes sizes)
      : budget_(budget), share_(std::move(share)), sizes_(sizes) {}
  ~StreamWindow() { Close(); }
  StreamWindow(const StreamWindow&) = delete;
  StreamWindow& operator=(const StreamWindow&) = delete;

  // The stream exists now: its initial window counts against the budget.
  void Open();
  // The stream is over: its window goes back to the budget. Idempotent.
  void Close();
  bool open() const { return open_; }
  std::int32_t size() const { return size_; }

  // `bytes` arrived from the sender.
  void Received(std::size_t bytes) { received_since_growth_ += bytes; }
  // The receiving side has taken everything queued. Returns the new window size when the window
  // should grow (the sender used all of it, and the share and the budget had the bytes), else 0;
  // `refusal` says which of them had not.
  std::int32_t GrowIfStarved(GrowthRefusal* refusal = nullptr);

 private:
  RelayBudget& budget_;
  const std::shared_ptr<ConnectionShare> share_;
  const WindowSizes sizes_;
  std::int32_t size_ = 0;
  std::size_t grown_by_ = 0;  // taken from the share
  std::size_t received_since_growth_ = 0;
  bool open_ = false;
};

}  // namespace sparktrace::proxy
