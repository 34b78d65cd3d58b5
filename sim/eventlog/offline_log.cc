#include "sim/eventlog/offline_log.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "sim/eventlog/random_source.h"

namespace sparktrace::sim::eventlog {
namespace {

// The first client connects this long after the application started (the server's start-up).
constexpr EpochMillis kFirstOperationAfterStartMs = 1500;
constexpr EpochMillis kSessionStartSpacingMs = 700;

struct Entry {
  EpochMillis time_ms = 0;
  int plan = -1;  // -1: an application line
  std::size_t index = 0;
};

}  // namespace

std::string UuidFrom(RandomSource& random) {
  const std::uint64_t high = random.NextU64();
  const std::uint64_t low = random.NextU64();
  char text[37];
  std::snprintf(text, sizeof text, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(high >> 32),
                static_cast<unsigned>((high >> 16) & 0xffff), static_cast<unsigned>(high & 0x0fff),
                static_cast<unsigned>(0x8000 | ((low >> 48) & 0x3fff)),
                static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return text;
}

std::vector<OperationSpec> MadeUpOperations(int count, int sessions, const std::string& user_id,
                                            std::uint64_t seed) {
  RandomSource random = RandomSource(seed).Fork(0x1D5);
  std::vector<std::string> session_ids;
  for (int i = 0; i < std::max(1, sessions); ++i) session_ids.push_back(UuidFrom(random));
  static constexpr struct {
    bool write;
    OperationSize size;
  } kPattern[] = {{false, OperationSize::kMedium}, {true, OperationSize::kMedium},
                  {false, OperationSize::kSmall},  {true, OperationSize::kLarge},
                  {false, OperationSize::kLarge},  {true, OperationSize::kSmall}};
  std::vector<OperationSpec> specs;
  for (int i = 0; i < count; ++i) {
    OperationSpec spec;
    spec.operation_id = UuidFrom(random);
    spec.session_id = session_ids[static_cast<std::size_t>(i) % session_ids.size()];
    spec.user_id = user_id;
    spec.write = kPattern[i % 6].write;
    spec.size = kPattern[i % 6].size;
    specs.push_back(std::move(spec));
  }
  return specs;
}

GeneratedLog GenerateLog(const OfflineLogOptions& options) {
  EventLogGenerator generator(options.app, options.scenario);
  GeneratedLog log;
  log.knobs = generator.knobs();
  const std::vector<OperationSpec> specs =
      options.specs.empty()
          ? MadeUpOperations(options.operations, options.sessions, options.user_id, options.scenario.seed)
          : options.specs;

  // Sessions in order of first appearance, each with its queue of operations.
  std::vector<std::string> session_order;
  std::map<std::string, std::vector<const OperationSpec*>> queues;
  for (const OperationSpec& spec : specs) {
    const std::string key = spec.user_id + "\n" + spec.session_id;
    if (!queues.contains(key)) session_order.push_back(key);
    queues[key].push_back(&spec);
  }
  // Gaps between a session's operations, drawn in a stream of their own (independent of tasks).
  RandomSource gaps = RandomSource(options.scenario.seed).Fork(0x6A9);
  std::vector<EpochMillis> next_start;
  std::vector<std::size_t> next_index(session_order.size(), 0);
  for (std::size_t s = 0; s < session_order.size(); ++s) {
    next_start.push_back(options.app.start_ms + kFirstOperationAfterStartMs +
                         static_cast<EpochMillis>(s) * kSessionStartSpacingMs);
  }
  // Plan in start order, so that executor changes made by one operation are seen by later ones.
  std::vector<OperationPlan> plans;
  EpochMillis last_ms = options.app.start_ms;
  while (true) {
    std::optional<std::size_t> session;
    for (std::size_t s = 0; s < session_order.size(); ++s) {
      if (next_index[s] >= queues[session_order[s]].size()) continue;
      if (!session || next_start[s] < next_start[*session]) session = s;
    }
    if (!session) break;
    const OperationSpec& spec = *queues[session_order[*session]][next_index[*session]++];
    plans.push_back(generator.PlanOperation(spec, next_start[*session]));
    log.operations.push_back(spec);
    const EpochMillis closed_ms = plans.back().events.back().time_ms;
    last_ms = std::max(last_ms, closed_ms);
    next_start[*session] = closed_ms + gaps.UniformInt(500, 2500) + log.knobs.extra_gap_between_operations_ms;
  }
  last_ms = std::max(last_ms, generator.executors().at(generator.executors().size() - 1).added_ms);

  std::vector<LogLine> app_lines = generator.StartApplication();
  for (LogLine& line : generator.InitialExecutors()) app_lines.push_back(std::move(line));
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < app_lines.size(); ++i) entries.push_back(Entry{app_lines[i].time_ms, -1, i});
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (std::size_t e = 0; e < plans[p].events.size(); ++e) {
      entries.push_back(Entry{plans[p].events[e].time_ms, static_cast<int>(p), e});
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.time_ms < b.time_ms; });
  for (const Entry& entry : entries) {
    if (entry.plan < 0) {
      log.lines.push_back(std::move(app_lines[entry.index]));
      continue;
    }
    for (LogLine& line : generator.Render(plans[static_cast<std::size_t>(entry.plan)], entry.index)) {
      log.lines.push_back(std::move(line));
    }
  }
  for (LogLine& line : generator.EndApplication(last_ms + 1000 + gaps.UniformInt(0, 2000))) {
    log.lines.push_back(std::move(line));
  }
  return log;
}

}  // namespace sparktrace::sim::eventlog
