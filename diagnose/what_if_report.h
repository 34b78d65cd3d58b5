#pragma once
// What-if estimates for `sparktrace diagnose` (diagnose/what_if): for the application and each Spark
// Connect operation, the simulated wall time on other clusters, shown under the findings they
// answer and as `what_if` in --json (diagnose/what_if/what_if_json.h).
//
// Pure functions of the model; thread-safe for concurrent readers of one model.

#include <optional>
#include <string>
#include <vector>

#include "diagnose/what_if/what_if_estimates.h"
#include "listener/correlate/application_model.h"

namespace sparktrace::diagnose {

struct WhatIfReport {
  std::vector<what_if::WhatIfEstimate> estimates;  // empty: none could be made
  std::optional<what_if::ReplayCheck> replay;
};

WhatIfReport ApplicationWhatIf(const listener::correlate::ApplicationModel& model);
WhatIfReport OperationWhatIf(const listener::correlate::ApplicationModel& model,
                             const listener::correlate::ConnectOperationRecord& operation);

// Text lines ("<indent>what if  with 8 executors from the start: ~1 min 52 s instead of 5 min 4 s")
// of the estimates that answer `finding_id`.
std::string WhatIfLinesFor(const WhatIfReport& report, std::string_view finding_id,
                           const std::string& indent);
// Every estimate, under a "what if" heading; nothing when there is none.
std::string WhatIfBlock(const WhatIfReport& report, const std::string& indent);
// The `what_if` JSON value (object or null), serialised.
std::string WhatIfJsonText(const WhatIfReport& report);

}  // namespace sparktrace::diagnose
