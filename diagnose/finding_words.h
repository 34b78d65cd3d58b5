#pragma once
// A finding in words, one wording wherever a person reads it: `sparktrace diagnose`'s text report
// and the finding events the proxy's feed puts on spans (which the trace view and OTLP backends
// show). The structured finding (finding.h) stays what scripts read: `diagnose --json` and the
// events' typed fields.
//
//   scope     "application", "operation", "job 4", "stage 3.0 (job 4)",
//             "SQL execution 7, node 2 SortMergeJoin"
//   evidence  "max_task_ms=81234 ms (>= 60000)", "gc_share=0.4123 (>= 0.2)",
//             "fs.s3a.committer.name=file" (the units share, ratio, count and id are not written)
//   numbers   integers whole, fractions with 4 significant digits
//
// Pure functions; thread-safe.

#include <string>

#include "diagnose/finding.h"

namespace sparktrace::diagnose {

std::string ScopeWords(const FindingScope& scope);
std::string EvidenceWords(const Evidence& evidence);
std::string NumberWords(double value);

}  // namespace sparktrace::diagnose
