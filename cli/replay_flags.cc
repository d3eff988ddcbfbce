#include "cli/replay_flags.h"

#include <fmt/core.h>

#include <cstdint>

#include "checker/engine/heuristic.h"
#include "cli/flag_ranges.h"
#include "model/error.h"

namespace dtr::cli {

void AddTraceArgument(CLI::App* cmd, std::string& trace) {
  cmd->add_option("trace", trace, "DTR execution log (JSON lines)")->required()->type_name("FILE");
}

// Where the names are listed, once, instead of 24 names in every --help (an
// unknown name's error lists them too: checker/engine/heuristic.cc).
const char* const kHeuristicNames = "the names: docs/concepts.md#heuristics-and-runtimes";

void AddHeuristicsFlag(CLI::App* cmd, std::vector<std::string>& heuristics, const std::string& help) {
  cmd->add_option("--heuristic", heuristics,
                  fmt::format("{} (default DTR; {})",
                              help.empty() ? "eviction heuristic(s), simrd's names, comma-separated" : help,
                              kHeuristicNames))
      ->delimiter(',')
      ->type_name("NAME,...");
}

void AddHeuristicFlag(CLI::App* cmd, api::ReplayChoice& f, const std::string& help) {
  f.heuristics.resize(1);
  cmd->add_option(
         "--heuristic", f.heuristics[0],
         fmt::format("{} (default DTR; {})", help.empty() ? "eviction heuristic, simrd's name" : help,
                     kHeuristicNames))
      ->type_name("NAME");
}

void AddHeuristicsFlag(CLI::App* cmd, api::ReplayChoice& f) { AddHeuristicsFlag(cmd, f.heuristics, ""); }

void AddRuntimeFlag(CLI::App* cmd, std::string& runtime, RuntimeChoice choice) {
  std::string names;
  for (std::string_view name : RuntimeNames())
    if (choice == RuntimeChoice::kAny || name != RuntimeName(RuntimeKind::kV1))
      names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  cmd->add_option("--runtime", runtime,
                  fmt::format("simrd runtime (default RuntimeV2EagerOptimized): {}", names))
      ->type_name("NAME");
}

void AddOverheadLimitFlag(CLI::App* cmd, std::optional<double>& limit, const std::string& help) {
  cmd->add_option_function<double>(
         "--overhead-limit", [&limit](const double& x) { limit = x; },
         help.empty()
             ? "end a run as 'thrash' once remat compute exceeds baseline compute * (X - 1) "
               "(default: no limit)"
             : help)
      ->type_name("FLOAT")
      ->check(InRange(api::kOverheadLimit));
}

void AddSeedFlag(CLI::App* cmd, api::ReplayChoice& f) {
  cmd->add_option("--seed", f.seed,
                  "seed of RandomStorage / AbRandom (own RNG, not Python's; default 0)")
      ->check(AnyUnsigned64());
}

void AddJobsFlag(CLI::App* cmd, int& jobs) {
  cmd->add_option("-j,--jobs", jobs, "worker threads (default: one per core)")
      ->check(InRange(api::kJobs));
}

void AddJsonFlag(CLI::App* cmd, bool& json, const std::string& help) {
  cmd->add_flag("--json", json, help);
}

void AddReplayFlags(CLI::App* cmd, api::ReplayChoice& f, bool many_heuristics) {
  if (many_heuristics)
    AddHeuristicsFlag(cmd, f);
  else
    AddHeuristicFlag(cmd, f);
  AddRuntimeFlag(cmd, f);
  AddOverheadLimitFlag(cmd, f);
  AddSeedFlag(cmd, f);
}

void AddBudgetFlags(CLI::App* cmd, BudgetChoice& b) {
  CLI::Option* ratio =
      cmd->add_option_function<std::string>(
             "--ratio", [&b](const std::string& text) { b.ratio = ParseRatio(text); },
             "budget as a fraction of the baseline peak memory, e.g. 0.102")
          ->type_name("RATIO")
          ->check(RatioText());
  cmd->add_option_function<int64_t>(
         "--budget", [&b](const int64_t& bytes) { b.budget = bytes; }, "budget in bytes (instead of --ratio)")
      ->type_name("INT")
      ->check(InRange(api::kBudget))
      ->excludes(ratio);
}


void AddCliffFactorFlag(CLI::App* cmd, double& factor, const std::string& help) {
  cmd->add_option("--cliff-factor", factor, help)->check(InRange(api::kCliffFactor));
}

void AddCheckpointFlag(CLI::App* cmd, std::string& file, const std::string& help) {
  cmd->add_option("--checkpoint", file, help)->type_name("FILE");
}

}  // namespace dtr::cli
