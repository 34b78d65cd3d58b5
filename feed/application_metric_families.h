#pragma once
// The spark_* per-application metric families (docs/tracing.md, "Metrics") rendered from
// ApplicationFigures snapshots, one sample (or a fixed few: phase, status, reason, stage_kind) per
// application name. A figure that is absent (nullopt) has no sample for that application.
//
// Pure function; the caller holds whatever lock guards the figures.

#include <prometheus/metric_family.h>

#include <vector>

#include "feed/application_figures.h"

namespace sparktrace::feed {

// `applications` in label order; every family is returned, empty ones included, so that HELP and
// TYPE are on /metrics before the first application.
std::vector<prometheus::MetricFamily> ApplicationMetricFamilies(
    const std::vector<const ApplicationFigures*>& applications);

}  // namespace sparktrace::feed
