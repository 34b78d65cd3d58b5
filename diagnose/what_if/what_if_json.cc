#include "diagnose/what_if/what_if_json.h"

#include <cmath>
#include <cstdint>

namespace sparktrace::diagnose::what_if {
namespace {

std::int64_t Ms(double ms) { return static_cast<std::int64_t>(std::llround(ms)); }

const char* AnchoringName(Anchoring anchoring) {
  switch (anchoring) {
    case Anchoring::kDifference:
      return "difference";
    case Anchoring::kRaw:
      return "raw";
    case Anchoring::kRatio:
      break;
  }
  return "ratio";
}

}  // namespace

nlohmann::ordered_json EstimateToJson(const WhatIfEstimate& estimate) {
  nlohmann::ordered_json json;
  json["name"] = estimate.name;
  json["label"] = estimate.label;
  json["sentence"] = EstimateSentence(estimate);
  json["executors"] = estimate.executors ? nlohmann::ordered_json(*estimate.executors) : nullptr;
  json["slots"] = estimate.slots;
  json["estimated_ms"] = Ms(estimate.estimated_ms);
  json["measured_ms"] = Ms(estimate.measured_ms);
  json["saving_ms"] = Ms(estimate.saving_ms);
  json["simulated_ms"] = Ms(estimate.simulated_ms);
  json["simulated_today_ms"] = Ms(estimate.simulated_today_ms);
  json["answers"] = estimate.answers;
  return json;
}

nlohmann::ordered_json WhatIfToJson(const std::vector<WhatIfEstimate>& estimates,
                                    const std::optional<ReplayCheck>& replay, Anchoring anchoring) {
  if (estimates.empty()) return nullptr;
  nlohmann::ordered_json json;
  json["anchoring"] = AnchoringName(anchoring);
  json["estimates"] = nlohmann::ordered_json::array();
  for (const WhatIfEstimate& estimate : estimates) json["estimates"].push_back(EstimateToJson(estimate));
  if (replay) {
    json["replay"] = {{"settled_at_ms", Ms(replay->settled_at_ms)},
                      {"jobs", replay->jobs},
                      {"measured_ms", Ms(replay->measured_ms)},
                      {"simulated_ms", Ms(replay->simulated_ms)}};
  } else {
    json["replay"] = nullptr;
  }
  return json;
}

}  // namespace sparktrace::diagnose::what_if
