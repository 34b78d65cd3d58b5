#include "proxy/relay_budget.h"

#include <algorithm>

namespace sparktrace::proxy {

bool RelayBudget::TryTake(std::size_t bytes) {
  std::size_t taken = taken_.load(std::memory_order_relaxed);
  do {
    if (taken + bytes > limit_) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!taken_.compare_exchange_weak(taken, taken + bytes, std::memory_order_relaxed));
  NoteHighWater(taken + bytes);
  return true;
}

void RelayBudget::Take(std::size_t bytes) {
  NoteHighWater(taken_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

void RelayBudget::Give(std::size_t bytes) { taken_.fetch_sub(bytes, std::memory_order_relaxed); }

void RelayBudget::NoteHighWater(std::size_t taken) {
  std::size_t high = high_water_.load(std::memory_order_relaxed);
  while (taken > high && !high_water_.compare_exchange_weak(high, taken, std::memory_order_relaxed)) {
  }
}

void StreamWindow::Open() {
  if (open_) return;
  open_ = true;
  size_ = sizes_.initial;
  budget_.Take(static_cast<std::size_t>(size_));
}

void StreamWindow::Close() {
  if (!open_) return;
  open_ = false;
  budget_.Give(static_cast<std::size_t>(size_));
  if (share_) share_->Give(grown_by_);
  grown_by_ = 0;
}

std::int32_t StreamWindow::GrowIfStarved(GrowthRefusal* refusal) {
  if (refusal != nullptr) *refusal = GrowthRefusal::kNone;
  if (!open_ || size_ >= sizes_.max) return 0;
  // Only a sender that has used a whole window was held back by it; a unary call's few hundred
  // bytes never get here, so they cost no WINDOW_UPDATE and no budget.
  if (received_since_growth_ < static_cast<std::size_t>(size_)) return 0;
  const std::int32_t grown = std::min(sizes_.max, size_ > sizes_.max / 2 ? sizes_.max : size_ * 2);
  const auto delta = static_cast<std::size_t>(grown - size_);
  if (share_ && !share_->TryTake(delta)) {
    if (refusal != nullptr) *refusal = GrowthRefusal::kConnectionShare;
    return 0;
  }
  if (!budget_.TryTake(delta)) {
    if (share_) share_->Give(delta);
    if (refusal != nullptr) *refusal = GrowthRefusal::kBudget;
    return 0;
  }
  if (share_) grown_by_ += delta;
  size_ = grown;
  received_since_growth_ = 0;
  return size_;
}

}  // namespace sparktrace::proxy
