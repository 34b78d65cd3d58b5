#include "sim/eventlog/live_event_log.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace sparktrace::sim::eventlog {
namespace {

bool Terminal(PlannedEventKind kind) {
  return kind == PlannedEventKind::kOperationFinished || kind == PlannedEventKind::kOperationFailed;
}

}  // namespace

EpochMillis LiveEventLog::NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

Result<std::unique_ptr<LiveEventLog>> LiveEventLog::Start(LiveEventLogOptions options) {
  if (!(options.time_scale > 0)) return InvalidArgument("time scale must be > 0");
  options.app.start_ms = NowMs();
  options.writer.app_id = options.app.app_id;
  auto writer = EventLogWriter::Open(options.writer);
  if (!writer.ok()) return writer.error();
  auto log = std::make_unique<LiveEventLog>(std::move(options), std::move(*writer), StartTag{});
  {
    std::lock_guard lock(log->mu_);
    log->WriteLocked(log->generator_.StartApplication());
  }
  log->executors_thread_ = std::thread([raw = log.get()] { raw->WriteInitialExecutors(); });
  return log;
}

LiveEventLog::LiveEventLog(const LiveEventLogOptions& options, std::unique_ptr<EventLogWriter> writer,
                           StartTag)
    : generator_(options.app, options.scenario, TimeMapping{options.app.start_ms, options.time_scale}),
      writer_(std::move(writer)),
      final_path_(writer_->final_path()) {}

LiveEventLog::~LiveEventLog() { Finish(); }

bool LiveEventLog::WaitUntil(EpochMillis due_ms) {
  std::unique_lock lock(mu_);
  const auto deadline = Clock::time_point(std::chrono::milliseconds(due_ms));
  interrupted_cv_.wait_until(lock, deadline, [this] { return interrupted_; });
  return !interrupted_;
}

void LiveEventLog::WriteLocked(const std::vector<LogLine>& lines) {
  if (finished_) return;
  for (const LogLine& line : lines) {
    if (auto ok = writer_->Write(line.text, line.flush); !ok) {
      spdlog::warn("sim event log: {}", ok.error().message);
      return;
    }
  }
}

void LiveEventLog::WriteInitialExecutors() {
  std::vector<LogLine> lines;
  {
    std::lock_guard lock(mu_);
    lines = generator_.InitialExecutors();
  }
  // Two lines per executor (ExecutorAdded, BlockManagerAdded), written when the executor arrives.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!WaitUntil(lines[i].time_ms)) return;
    std::lock_guard lock(mu_);
    WriteLocked({lines[i]});
  }
}

std::unique_ptr<LiveEventLog::Operation> LiveEventLog::Run(const OperationSpec& spec) {
  auto operation = std::make_unique<Operation>();
  {
    std::lock_guard lock(mu_);
    const EpochMillis start = generator_.time_mapping().VirtualTime(NowMs());
    operation->plan = generator_.PlanOperation(spec, start);
  }
  OperationPlan& plan = operation->plan;
  while (operation->next_event < plan.events.size()) {
    const PlannedEvent& event = plan.events[operation->next_event];
    if (event.kind == PlannedEventKind::kOperationClosed) break;
    if (!WaitUntil(generator_.time_mapping().Time(event.time_ms))) return operation;
    std::lock_guard lock(mu_);
    WriteLocked(generator_.Render(plan, operation->next_event));
    ++operation->next_event;
    if (Terminal(event.kind)) break;
  }
  operation->failed = plan.failed;
  if (plan.failed) {
    for (const StagePlan& stage : plan.stages) {
      if (!stage.aborting_task) continue;
      const TaskPlan& task = plan.tasks[static_cast<std::size_t>(*stage.aborting_task)];
      operation->error_message =
          "Job aborted due to stage failure: Task " + std::to_string(task.index) + " in stage " +
          std::to_string(stage.global_stage_id) + ".0 failed " + std::to_string(task.attempt + 1) +
          " times, most recent failure: " + task.exception_class + ": " + task.exception_message;
    }
  }
  return operation;
}

void LiveEventLog::Close(Operation& operation) {
  OperationPlan& plan = operation.plan;
  std::lock_guard lock(mu_);
  if (interrupted_) return;
  // Whatever is left before Closed (nothing, unless Run() was cut short) is not written: the
  // Closed event is only meaningful after the operation's terminal event.
  for (std::size_t index = operation.next_event; index < plan.events.size(); ++index) {
    if (plan.events[index].kind != PlannedEventKind::kOperationClosed) continue;
    if (operation.next_event == 0 || !Terminal(plan.events[operation.next_event - 1].kind)) return;
    // Dated now: the client's stream ended now, not when the plan guessed.
    plan.events[index].time_ms =
        std::max(plan.events[index - 1].time_ms, generator_.time_mapping().VirtualTime(NowMs()));
    WriteLocked(generator_.Render(plan, index));
    operation.next_event = index + 1;
    return;
  }
}

void LiveEventLog::Interrupt() {
  std::lock_guard lock(mu_);
  interrupted_ = true;
  interrupted_cv_.notify_all();
}

void LiveEventLog::Finish() {
  Interrupt();
  if (executors_thread_.joinable()) executors_thread_.join();
  std::lock_guard lock(mu_);
  if (finished_) return;
  WriteLocked(generator_.EndApplication(generator_.time_mapping().VirtualTime(NowMs())));
  finished_ = true;
  if (auto ok = writer_->Close(); !ok) spdlog::warn("sim event log: {}", ok.error().message);
}

}  // namespace sparktrace::sim::eventlog
