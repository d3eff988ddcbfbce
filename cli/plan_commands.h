// plan: which modules of a captured PyTorch step to wrap in
// torch.utils.checkpoint so that it fits a budget (diagnose/checkpoint_plan.h,
// docs/commands/plan.md).
#pragma once

#include <CLI/CLI.hpp>

#include "api/front_door.h"
#include "cli/replay_flags.h"

namespace dtr::cli {

struct PlanFlags {
  std::string trace;
  api::PlanRequest request;
  bool json = false;
};
void AddPlanFlags(CLI::App* cmd, PlanFlags& f);
int RunPlan(const PlanFlags& f);

}  // namespace dtr::cli
