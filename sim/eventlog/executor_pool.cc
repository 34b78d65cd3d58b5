#include "sim/eventlog/executor_pool.h"

#include <utility>

namespace sparktrace::sim::eventlog {

int ExecutorPool::Add(int cores, EpochMillis request_ms, EpochMillis added_ms) {
  ExecutorRecord executor;
  const int number = size() + 1;
  executor.id = std::to_string(number);
  // One executor per host, as on Kubernetes; addresses in a private /16.
  executor.host = "10.0." + std::to_string(1 + number / 250) + "." + std::to_string(10 + number % 250);
  executor.cores = cores;
  executor.request_ms = request_ms;
  executor.added_ms = added_ms;
  executors_.push_back(std::move(executor));
  return size() - 1;
}

void ExecutorPool::Remove(int index, EpochMillis removed_ms, std::string reason) {
  ExecutorRecord& executor = executors_.at(static_cast<std::size_t>(index));
  executor.removed_ms = removed_ms;
  executor.removed_reason = std::move(reason);
}

std::vector<int> ExecutorPool::NotRemovedAt(EpochMillis time_ms) const {
  std::vector<int> alive;
  for (int index = 0; index < size(); ++index) {
    const ExecutorRecord& executor = at(index);
    if (!executor.removed_ms || *executor.removed_ms > time_ms) alive.push_back(index);
  }
  return alive;
}

}  // namespace sparktrace::sim::eventlog
