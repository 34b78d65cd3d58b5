#pragma once
// Metrics: the figures (application_figures.h) of the applications whose metrics changed since the
// last call, for FeedMetrics::Publish — named by the application's name, else its id, else its
// source key, with the Airflow task of its latest traced operation.
//
// Clears each application's `metrics_changed`; feed thread only.

#include <vector>

#include "feed/application_figures.h"
#include "feed/feed_applications.h"

namespace sparktrace::feed {

std::vector<ApplicationFigures> TakeChangedFigures(FeedApplications& applications);

}  // namespace sparktrace::feed
