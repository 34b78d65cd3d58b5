#include "diagnose/what_if_report.h"

#include <algorithm>

#include "diagnose/what_if/what_if_json.h"
#include "diagnose/what_if_of_model.h"

namespace sparktrace::diagnose {

WhatIfReport ApplicationWhatIf(const listener::correlate::ApplicationModel& model) {
  const what_if::AttemptInput input = WhatIfInputOfApplication(model);
  return WhatIfReport{what_if::EstimateWhatIf(input), what_if::CheckAgainstSettledJobs(input)};
}

WhatIfReport OperationWhatIf(const listener::correlate::ApplicationModel& model,
                             const listener::correlate::ConnectOperationRecord& operation) {
  const what_if::AttemptInput input = WhatIfInputOfOperation(model, operation);
  return WhatIfReport{what_if::EstimateWhatIf(input), what_if::CheckAgainstSettledJobs(input)};
}

std::string WhatIfLinesFor(const WhatIfReport& report, std::string_view finding_id,
                           const std::string& indent) {
  std::string out;
  for (const what_if::WhatIfEstimate& estimate : report.estimates) {
    if (std::find(estimate.answers.begin(), estimate.answers.end(), finding_id) == estimate.answers.end())
      continue;
    out += indent + "what if  " + what_if::EstimateSentence(estimate) + "\n";
  }
  return out;
}

std::string WhatIfBlock(const WhatIfReport& report, const std::string& indent) {
  if (report.estimates.empty()) return {};
  std::string out = indent + "what if (simulated from the log's own tasks; docs/diagnose-rules.md)\n";
  for (const what_if::WhatIfEstimate& estimate : report.estimates) {
    out += indent + "  " + what_if::EstimateSentence(estimate) + "\n";
  }
  return out;
}

std::string WhatIfJsonText(const WhatIfReport& report) {
  return what_if::WhatIfToJson(report.estimates, report.replay).dump();
}

}  // namespace sparktrace::diagnose
