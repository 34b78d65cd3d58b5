#pragma once
// One event of the REST feed: the same SparkEvent the event-log feed produces, plus which
// application it belongs to (an event log is one application; a REST server may list several).

#include <optional>
#include <string>

#include "listener/events/spark_event.h"

namespace sparktrace::listener::rest {

struct RestEvent {
  std::string application_id;
  std::optional<std::string> attempt_id;
  events::SparkEvent event;
  // StageCompleted only: the sums over the stage attempt's tasks that the REST API gives. The
  // event log has these per task (TaskEnd), which the stage list cannot reproduce.
  std::optional<events::TaskMetrics> stage_task_metrics_sum;
};

}  // namespace sparktrace::listener::rest
