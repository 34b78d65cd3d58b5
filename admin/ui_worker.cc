#include "admin/ui_worker.h"

#include <utility>

namespace sparktrace::admin {

UiWorker::UiWorker(std::size_t max_queued) : max_queued_(max_queued), thread_([this] { Run(); }) {}

UiWorker::~UiWorker() {
  {
    const std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

bool UiWorker::TrySubmit(std::function<void()> job) {
  {
    const std::lock_guard lock(mu_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

void UiWorker::Run() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();  // outside the lock: a slow job must not block TrySubmit
  }
}

}  // namespace sparktrace::admin
