#include "cli/plan_commands.h"

#include <iostream>
#include <optional>

#include "checker/eviction_script.h"
#include "checker/ratio_grid.h"
#include "diagnose/checkpoint_plan.h"
#include "model/trace_parser.h"
#include "reports/plan_report.h"

namespace dtr::cli {

void AddPlanFlags(CLI::App* cmd, PlanFlags& f) {
  AddTraceArgument(cmd, f.trace);
  AddBudgetFlags(cmd, f);
  cmd->add_flag("--json", f.json, "print the plan as one JSON object (docs/commands/plan.md)");
  cmd->add_option("--save-script", f.save_script,
                  "write the plan's simulated evictions as an eviction script "
                  "(docs/eviction_script.md), for dtrcheck check")
      ->type_name("FILE");
}

int RunPlan(const PlanFlags& f) {
  RequireBudget(f, "plan");
  std::optional<Ratio> ratio;
  if (!f.ratio.empty() && f.budget < 0) ratio = ParseRatio(f.ratio);
  Trace trace = LoadTrace(f.trace);
  const int64_t budget =
      ratio ? BudgetForRatio(ComputeBaseline(trace).memory, ratio->value) : f.budget;
  CheckpointPlan plan = PlanCheckpoints(trace, budget);
  if (!f.save_script.empty()) {
    std::vector<std::string> comment = {"dtrcheck plan: the evictions of checkpointing"};
    for (const PlannedModule& m : plan.modules) comment.push_back("  " + m.module);
    SaveEvictionScript(f.save_script, trace, plan.script, comment);
  }
  if (f.json)
    std::cout << PlanJson(trace, plan).dump() << "\n";
  else
    PrintPlanText(std::cout, trace, plan);
  return 0;
}

}  // namespace dtr::cli
