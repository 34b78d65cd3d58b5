#include "feed/changed_figures.h"

#include <optional>
#include <string>
#include <utility>

namespace sparktrace::feed {

std::vector<ApplicationFigures> TakeChangedFigures(FeedApplications& applications) {
  std::vector<ApplicationFigures> figures;
  for (auto& [key, application] : applications.all()) {
    if (!application.metrics_changed) continue;
    application.metrics_changed = false;
    const std::optional<PhaseTotals> totals = application.phases.Totals(application.model);
    if (!totals) continue;
    const listener::correlate::ApplicationRecord& app = application.model.application();
    std::string name = !app.app_name.empty() ? app.app_name : !app.app_id.empty() ? app.app_id : key;
    figures.push_back(
        FiguresOf(std::move(name), application.model, *totals, application.events, Over(application)));
    figures.back().airflow_task = application.airflow_task;
  }
  return figures;
}

}  // namespace sparktrace::feed
