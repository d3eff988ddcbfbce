#include "cli/replay_flags.h"

#include <fmt/core.h>

#include "checker/heuristic.h"
#include "model/error.h"

namespace dtr::cli {

void AddTraceArgument(CLI::App* cmd, std::string& trace) {
  cmd->add_option("trace", trace, "DTR execution log (JSON lines)")->required();
}

void AddHeuristicFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help) {
  f.heuristics.resize(1);
  cmd->add_option("--heuristic", f.heuristics[0],
                  help.empty() ? "eviction heuristic, simrd's name (default DTR)" : help);
}

void AddHeuristicsFlag(CLI::App* cmd, ReplayFlags& f) {
  cmd->add_option("--heuristic", f.heuristics, "eviction heuristic(s), simrd's names (default DTR)")
      ->delimiter(',');
}

void AddRuntimeFlag(CLI::App* cmd, ReplayFlags& f, RuntimeChoice choice) {
  cmd->add_option("--runtime", f.runtime,
                  choice == RuntimeChoice::kAny
                      ? "RuntimeV2EagerOptimized (default), RuntimeV2Optimized, RuntimeV1, ..."
                      : "RuntimeV2EagerOptimized (default) or another RuntimeV2 variant");
}

void AddOverheadLimitFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help) {
  cmd->add_option(
      "--overhead-limit", f.overhead_limit,
      help.empty() ? "end a run as 'thrash' once remat compute exceeds baseline compute * (X - 1)"
                   : help);
}

void AddSeedFlag(CLI::App* cmd, ReplayFlags& f) {
  cmd->add_option("--seed", f.seed, "seed of RandomStorage / AbRandom (own RNG, not Python's)");
}

void AddJobsFlag(CLI::App* cmd, ReplayFlags& f) {
  cmd->add_option("-j,--jobs", f.jobs, "worker threads (default: one per core)");
}

void AddJsonFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help) {
  cmd->add_flag("--json", f.json, help);
}

void AddReplayFlags(CLI::App* cmd, ReplayFlags& f, bool many_heuristics) {
  if (many_heuristics)
    AddHeuristicsFlag(cmd, f);
  else
    AddHeuristicFlag(cmd, f);
  AddRuntimeFlag(cmd, f);
  AddOverheadLimitFlag(cmd, f);
  AddSeedFlag(cmd, f);
}

void AddBudgetFlags(CLI::App* cmd, BudgetFlags& f) {
  cmd->add_option("--ratio", f.ratio,
                  "budget as a fraction of the baseline peak memory, e.g. 0.102");
  cmd->add_option("--budget", f.budget, "budget in bytes (overrides --ratio)");
}

void RequireBudget(const BudgetFlags& f, const std::string& command) {
  if (f.ratio.empty() && f.budget < 0)
    throw Error(fmt::format("{} needs --ratio R or --budget BYTES", command));
}

std::optional<double> OverheadLimit(const ReplayFlags& f) {
  if (f.overhead_limit == 0) return std::nullopt;
  if (!(f.overhead_limit >= 1))
    throw Error(fmt::format("--overhead-limit must be at least 1, got {}", f.overhead_limit));
  return f.overhead_limit;
}

RunSpec SpecFrom(const ReplayFlags& f, const std::string& heuristic) {
  RunSpec s;
  s.heuristic = &FindHeuristic(heuristic);
  s.runtime = ParseRuntime(f.runtime);
  s.overhead_limit = OverheadLimit(f);
  s.seed = f.seed;
  return s;
}

}  // namespace dtr::cli
