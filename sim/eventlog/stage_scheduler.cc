#include "sim/eventlog/stage_scheduler.h"

#include <algorithm>
#include <deque>
#include <utility>
#include <vector>

namespace sparktrace::sim::eventlog {
namespace {

struct Slot {
  int executor = 0;
  EpochMillis free_ms = 0;
  EpochMillis dies_ms = kNever;
  bool dead = false;
};

}  // namespace

EpochMillis ScheduleStage(OperationPlan& plan, int stage_index, const StageDraft& draft, EpochMillis start_ms,
                          const ExecutorPool& pool, RandomSource& random) {
  std::vector<Slot> slots;
  for (int executor : pool.NotRemovedAt(start_ms)) {
    const ExecutorRecord& record = pool.at(executor);
    for (int core = 0; core < record.cores; ++core) {
      Slot slot;
      slot.executor = executor;
      slot.free_ms = std::max(start_ms, record.added_ms) + random.UniformInt(2, 25);
      slot.dies_ms = record.removed_ms.value_or(kNever);
      slots.push_back(slot);
    }
  }
  const int tasks = static_cast<int>(draft.attempts.size());
  std::deque<int> pending;
  for (int index = 0; index < tasks; ++index) pending.push_back(index);
  std::vector<std::size_t> next_draft(static_cast<std::size_t>(tasks), 0);
  std::vector<int> attempts_made(static_cast<std::size_t>(tasks), 0);
  std::vector<int> failures(static_cast<std::size_t>(tasks), 0);
  EpochMillis last_end = start_ms;
  const std::size_t first_task = plan.tasks.size();
  StagePlan& stage = plan.stages[static_cast<std::size_t>(stage_index)];

  while (!pending.empty()) {
    Slot* slot = nullptr;
    for (Slot& candidate : slots) {
      if (candidate.dead) continue;
      if (candidate.free_ms >= candidate.dies_ms) {
        candidate.dead = true;
        continue;
      }
      if (!slot || candidate.free_ms < slot->free_ms) slot = &candidate;
    }
    if (!slot) break;  // no executor left: what remains never runs (the stage is left running)
    const int index = pending.front();
    pending.pop_front();
    const auto idx = static_cast<std::size_t>(index);
    const AttemptDraft& attempt =
        draft.attempts[idx][std::min(next_draft[idx], draft.attempts[idx].size() - 1)];
    TaskPlan task;
    task.stage = stage_index;
    task.index = index;
    task.attempt = attempts_made[idx]++;
    task.executor = slot->executor;
    task.launch_ms = slot->free_ms + random.UniformInt(0, 6);
    const EpochMillis would_finish = task.launch_ms + std::max<EpochMillis>(1, Round(attempt.duration_ms));
    if (would_finish > slot->dies_ms) {
      // The executor died under the task: Spark reports the loss, without metrics, and retries.
      task.outcome = TaskOutcome::kExecutorLost;
      task.finish_ms = std::max(task.launch_ms, slot->dies_ms);
      task.has_metrics = false;
      task.loss_reason = pool.at(slot->executor).removed_reason;
      slot->dead = true;
      pending.push_back(index);
    } else {
      task.outcome = attempt.outcome;
      task.finish_ms = would_finish;
      task.metrics = attempt.metrics;
      task.exception_class = attempt.exception_class;
      task.exception_message = attempt.exception_message;
      ++next_draft[idx];
      slot->free_ms = would_finish + random.UniformInt(1, 8);
      if (task.outcome == TaskOutcome::kExceptionFailure) {
        ++failures[idx];
        if (failures[idx] < kMaxTaskFailures) pending.push_back(index);
      }
    }
    last_end = std::max(last_end, task.finish_ms);
    const bool aborts = task.outcome == TaskOutcome::kExceptionFailure && failures[idx] >= kMaxTaskFailures;
    plan.tasks.push_back(std::move(task));
    if (aborts) {
      // The stage is aborted: its running attempts are killed, pending ones never start.
      const EpochMillis abort_ms = plan.tasks.back().finish_ms;
      stage.aborting_task = static_cast<int>(plan.tasks.size() - 1);
      for (std::size_t t = first_task; t + 1 < plan.tasks.size(); ++t) {
        TaskPlan& running = plan.tasks[t];
        if (running.finish_ms > abort_ms && running.outcome == TaskOutcome::kSuccess) {
          running.outcome = TaskOutcome::kKilled;
          running.finish_ms = abort_ms + random.UniformInt(5, 60);
          running.metrics.output_bytes = 0;
          running.metrics.output_records = 0;
          last_end = std::max(last_end, running.finish_ms);
        }
      }
      pending.clear();
      return abort_ms;
    }
  }
  return last_end;
}

}  // namespace sparktrace::sim::eventlog
