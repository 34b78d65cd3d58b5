#include "diagnose/suppression.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "diagnose/glob_match.h"
#include "diagnose/rules_document.h"

namespace sparktrace::diagnose {
namespace {

constexpr std::string_view kSection = "suppressions";
constexpr std::array<std::string_view, 10> kRuleIds = {
    kResourceWaitLong, kS3WriteSlow, kDataSkew,      kOomAndSpill,  kShuffleBottleneck,
    kLowParallelism,   kGcPressure,  kIdleExecutors, kTaskFailures, kSlowSparkJobs};

bool KnownFindingId(std::string_view id) {
  if (id == kAnyGlob) return true;
  for (std::string_view known : kRuleIds) {
    if (known == id) return true;
  }
  return false;
}

std::string Where(const RulesListItem& item, std::string_view field) {
  return fmt::format("suppression #{}{}", item.number, field.empty() ? "" : fmt::format(" \"{}\"", field));
}

// The string of a required field: present, a string, not blank.
Result<std::string> RequiredText(const RulesListItem& item, std::string_view field) {
  for (const RulesEntry& entry : item.fields) {
    if (entry.key != field) continue;
    if (entry.value.kind != RulesValue::Kind::kString) {
      return InvalidArgument(Where(item, field) + ": expected a string, got " + entry.value.text);
    }
    if (entry.value.text.find_first_not_of(" \t") == std::string::npos) {
      return InvalidArgument(Where(item, field) + ": must not be empty");
    }
    return entry.value.text;
  }
  return InvalidArgument(Where(item, field) + ": missing (required)");
}

Result<Suppression> SuppressionOf(const RulesListItem& item) {
  constexpr std::array<std::string_view, 5> kFields = {"id", "dag", "task", "reason", "until"};
  for (const RulesEntry& entry : item.fields) {
    if (std::find(kFields.begin(), kFields.end(), entry.key) == kFields.end()) {
      return InvalidArgument(Where(item, entry.key) +
                             ": unknown field (expected id, dag, task, reason, until)");
    }
  }
  Suppression suppression;
  suppression.number = item.number;
  Result<std::string> id = RequiredText(item, "id");
  if (!id.ok()) return id.error();
  if (!KnownFindingId(*id))
    return InvalidArgument(Where(item, "id") + ": unknown finding id \"" + *id + "\"");
  suppression.finding_id = std::move(*id);
  Result<std::string> dag = RequiredText(item, "dag");
  if (!dag.ok()) return dag.error();
  suppression.dag_glob = std::move(*dag);
  Result<std::string> task = RequiredText(item, "task");
  if (!task.ok()) return task.error();
  suppression.task_glob = std::move(*task);
  Result<std::string> reason = RequiredText(item, "reason");
  if (!reason.ok()) return reason.error();
  suppression.reason = std::move(*reason);
  Result<std::string> until = RequiredText(item, "until");
  if (!until.ok()) return until.error();
  const std::optional<std::chrono::sys_days> day = ParseDate(*until);
  if (!day) return InvalidArgument(Where(item, "until") + ": expected a date YYYY-MM-DD, got " + *until);
  suppression.until = *day;
  return suppression;
}

bool Matches(const Suppression& suppression, std::string_view finding_id,
             const std::optional<SuppressionTask>& task) {
  if (suppression.finding_id != kAnyGlob && suppression.finding_id != finding_id) return false;
  // Without an Airflow identity there is nothing to match a narrower glob against.
  if (!task) return suppression.dag_glob == kAnyGlob && suppression.task_glob == kAnyGlob;
  return GlobMatches(suppression.dag_glob, task->dag_id) && GlobMatches(suppression.task_glob, task->task_id);
}

}  // namespace

std::string Suppression::Describe() const {
  return fmt::format("suppression #{} ({} on dag {}, task {})", number, finding_id, dag_glob, task_glob);
}

Result<std::vector<Suppression>> SuppressionsFromItems(const std::vector<RulesListItem>& items) {
  std::vector<Suppression> suppressions;
  for (const RulesListItem& item : items) {
    if (item.section != kSection)
      return InvalidArgument("\"" + item.section + "\": lists are not allowed here");
    Result<Suppression> suppression = SuppressionOf(item);
    if (!suppression.ok()) return suppression.error();
    suppressions.push_back(std::move(*suppression));
  }
  return suppressions;
}

const Suppression* FindSuppression(const std::vector<Suppression>& suppressions, std::string_view finding_id,
                                   const std::optional<SuppressionTask>& task, std::chrono::sys_days today) {
  for (const Suppression& suppression : suppressions) {
    if (!suppression.ExpiredOn(today) && Matches(suppression, finding_id, task)) return &suppression;
  }
  return nullptr;
}

void ApplySuppressions(std::vector<Finding>& findings, const std::vector<Suppression>& suppressions,
                       const std::optional<SuppressionTask>& task, std::chrono::sys_days today) {
  for (Finding& finding : findings) {
    if (const Suppression* match = FindSuppression(suppressions, finding.id, task, today)) {
      finding.suppressed = FindingSuppression{match->reason, DateText(match->until)};
    }
  }
}

std::chrono::sys_days UtcDay(std::chrono::system_clock::time_point now) {
  return std::chrono::floor<std::chrono::days>(now);
}

std::string DateText(std::chrono::sys_days day) {
  const std::chrono::year_month_day date(day);
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                     static_cast<unsigned>(date.day()));
}

std::optional<std::chrono::sys_days> ParseDate(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  const auto number = [&text](std::size_t at, std::size_t length) -> std::optional<int> {
    int value = 0;
    const char* first = text.data() + at;
    const auto [end, error] = std::from_chars(first, first + length, value);
    if (error != std::errc() || end != first + length) return std::nullopt;
    return value;
  };
  const std::optional<int> year = number(0, 4);
  const std::optional<int> month = number(5, 2);
  const std::optional<int> day = number(8, 2);
  if (!year || !month || !day || *month < 1 || *day < 1) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;  // 2026-02-30
  return std::chrono::sys_days(date);
}

std::string ExpiredMessage(const Suppression& suppression) {
  return suppression.Describe() + " expired on " + DateText(suppression.until) + ": ignored";
}

}  // namespace sparktrace::diagnose
