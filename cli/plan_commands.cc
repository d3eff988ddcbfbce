#include "cli/plan_commands.h"

#include <iostream>

#include "reports/plan_report.h"

namespace dtr::cli {

void AddPlanFlags(CLI::App* cmd, PlanFlags& f) {
  AddTraceArgument(cmd, f.trace);
  AddBudgetFlags(cmd, f.request.budget);
  cmd->add_flag("--json", f.json, "print the plan as one JSON object (docs/commands/plan.md)");
  cmd->add_option("--save-script", f.request.save_script,
                  "write the plan's simulated evictions as an eviction script "
                  "(docs/eviction_script.md), for dtrcheck check")
      ->type_name("FILE");
}

int RunPlan(const PlanFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace trace = api::LoadTraceFile(f.trace);
  CheckpointPlan plan = api::Plan(trace, f.request);
  if (f.json)
    std::cout << api::PlanJson(trace, plan).dump() << "\n";
  else
    PrintPlanText(std::cout, trace.trace, plan);
  return 0;
}

}  // namespace dtr::cli
