#include "cli/replay_flags.h"

#include <fmt/core.h>

#include <cstdint>

#include <filesystem>

#include "checker/file_digest.h"
#include "checker/heuristic.h"
#include "cli/flag_ranges.h"
#include "diagnose/certificate_store.h"
#include "model/error.h"

namespace dtr::cli {

void AddTraceArgument(CLI::App* cmd, std::string& trace) {
  cmd->add_option("trace", trace, "DTR execution log (JSON lines)")->required()->type_name("FILE");
}

std::string HeuristicNameList() {
  std::string names;
  for (const HeuristicSpec& h : AllHeuristics())
    names += fmt::format("{}{}", names.empty() ? "" : ", ", h.name);
  return names;
}

void AddHeuristicFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help) {
  f.heuristics.resize(1);
  cmd->add_option(
         "--heuristic", f.heuristics[0],
         fmt::format("{} (default DTR): {}",
                     help.empty() ? "eviction heuristic, simrd's name" : help, HeuristicNameList()))
      ->type_name("NAME");
}

void AddHeuristicsFlag(CLI::App* cmd, ReplayFlags& f) {
  cmd->add_option("--heuristic", f.heuristics,
                  fmt::format("eviction heuristic(s), simrd's names, comma-separated (default "
                              "DTR): {}",
                              HeuristicNameList()))
      ->delimiter(',')
      ->type_name("NAME,...");
}

void AddRuntimeFlag(CLI::App* cmd, std::string& runtime, RuntimeChoice choice) {
  std::string names;
  for (std::string_view name : RuntimeNames())
    if (choice == RuntimeChoice::kAny || name != RuntimeName(RuntimeKind::kV1))
      names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  cmd->add_option("--runtime", runtime,
                  fmt::format("simrd runtime (default RuntimeV2EagerOptimized): {}", names))
      ->type_name("NAME");
}

void AddOverheadLimitFlag(CLI::App* cmd, double& limit, const std::string& help) {
  cmd->add_option(
         "--overhead-limit", limit,
         help.empty()
             ? "end a run as 'thrash' once remat compute exceeds baseline compute * (X - 1) "
               "(default: no limit)"
             : help)
      ->check(NumberFrom(1));
}

void AddSeedFlag(CLI::App* cmd, ReplayFlags& f) {
  cmd->add_option("--seed", f.seed,
                  "seed of RandomStorage / AbRandom (own RNG, not Python's; default 0)")
      ->check(AnyUnsigned64());
}

void AddJobsFlag(CLI::App* cmd, int& jobs) {
  cmd->add_option("-j,--jobs", jobs, "worker threads (default: one per core)")
      ->check(IntegerIn(1, 1024));
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
  CLI::Option* ratio = cmd->add_option("--ratio", f.ratio,
                                       "budget as a fraction of the baseline peak memory, e.g. 0.102")
                           ->type_name("RATIO")
                           ->check(RatioText());
  cmd->add_option("--budget", f.budget, "budget in bytes (instead of --ratio)")
      ->check(IntegerIn(0, kMaxInt64))
      ->excludes(ratio);
}

void RequireBudget(const BudgetFlags& f, const std::string& command) {
  if (f.ratio.empty() && f.budget < 0)
    throw Error(fmt::format("{} needs --ratio R or --budget BYTES", command));
}

void AddCliffFactorFlag(CLI::App* cmd, double& factor, const std::string& help) {
  cmd->add_option("--cliff-factor", factor, help)->check(NumberAbove(1));
}

void AddTimeoutFlag(CLI::App* cmd, double& seconds) {
  cmd->add_option("--timeout", seconds, "seconds per Z3 call (default 10)")
      ->check(NumberAbove(0, 86400));
}

void AddWorkLimitFlag(CLI::App* cmd, uint32_t& limit) {
  cmd->add_option("--work-limit", limit,
                  "Z3's resource limit per call (its rlimit; default 0: none): a count, not a "
                  "time, so a call it cuts is cut on any machine and under any load")
      ->check(IntegerIn(0, UINT32_MAX));
}

void AddWindowsFlag(CLI::App* cmd, int32_t& windows, const std::string& help) {
  cmd->add_option("--windows", windows, help)->check(IntegerIn(0, 1000));
}

void AddWindowOpsFlag(CLI::App* cmd, int32_t& window_ops) {
  cmd->add_option("--window-ops", window_ops, "operators per Z3 window (default 6)")
      ->check(IntegerIn(1, 1000));
}

std::optional<double> OverheadLimit(double limit) {
  if (limit == 0) return std::nullopt;
  return limit;
}

RunSpec SpecFrom(const ReplayFlags& f, const std::string& heuristic) {
  RunSpec s;
  s.heuristic = &FindHeuristic(heuristic);
  s.runtime = ParseRuntime(f.runtime);
  s.overhead_limit = OverheadLimit(f);
  s.seed = f.seed;
  return s;
}

void AddCheckpointFlag(CLI::App* cmd, std::string& file, const std::string& help) {
  cmd->add_option("--checkpoint", file, help)->type_name("FILE");
}

TraceFingerprint CheckpointFingerprint(const std::string& path, const Trace& trace, const Baseline& baseline) {
  return FingerprintOf(trace, baseline, FileDigest(path), std::filesystem::path(path).filename().string());
}

}  // namespace dtr::cli
