#pragma once
// Regressions across the logs of one `sparktrace diagnose` run: the logs of one application name
// are the runs of one job, oldest first by their start; a run markedly slower than the median of
// the earlier ended, successful ones gets a `regression` finding (the thresholds and wording of
// the trace view's: the regression model, diagnose/regression/), naming the phase that grew most.
// Event logs name no Airflow task, so the application's name is what ties its runs together.
//
// Pure function of the logs; not thread-safe on `logs`.

#include <vector>

#include "cli/diagnose/report.h"

namespace sparktrace::cli::diagnose {

// Adds each regression to its log's application findings, ranked by impact (the time lost).
void AddRegressionFindings(std::vector<DiagnosedLog>& logs);

}  // namespace sparktrace::cli::diagnose
