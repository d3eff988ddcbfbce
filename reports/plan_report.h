// Renders a checkpoint plan (diagnose/checkpoint_plan.h) as `dtrcheck plan`
// prints it and as its --json and dtrcheck.plan() give it
// (docs/commands/plan.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "diagnose/checkpoint_plan.h"
#include "model/trace.h"

namespace dtr {

void PrintPlanText(std::ostream& out, const Trace& trace, const CheckpointPlan& p);
nlohmann::ordered_json PlanJson(const Trace& trace, const CheckpointPlan& p);

}  // namespace dtr
