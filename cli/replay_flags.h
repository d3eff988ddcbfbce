// The flags every replaying subcommand shares (the trace, --heuristic,
// --runtime, --overhead-limit, --seed, -j, --json, --ratio/--budget), added to
// a CLI11 command in one place so that each flag has one name, one help text
// and one check, and the RunSpec they describe is built in one place.
//
// A command's own flag struct derives from ReplayFlags (and BudgetFlags when it
// takes one budget) and calls the Add* functions in the order its --help
// should list the flags.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/replay.h"
#include "checker/sweep.h"

namespace dtr::cli {

struct ReplayFlags {
  std::string trace;
  std::vector<std::string> heuristics{"DTR"};  // one entry unless added with AddHeuristicsFlag
  std::string runtime = "RuntimeV2EagerOptimized";
  double overhead_limit = 0;  // 0: none
  uint64_t seed = 0;
  int jobs = 0;  // 0: one per core
  bool json = false;

  const std::string& heuristic() const { return heuristics[0]; }
};

// One budget, as a ratio of the baseline peak memory or in bytes.
struct BudgetFlags {
  std::string ratio;
  int64_t budget = -1;  // -1: not given
};

// The required positional trace argument.
void AddTraceArgument(CLI::App* cmd, std::string& trace);

// --heuristic NAME (one heuristic). `help` overrides the usual text where the
// flag means something narrower (explain: the heuristic of the run explained).
void AddHeuristicFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help = "");
// --heuristic A,B,... (several heuristics, comma-separated).
void AddHeuristicsFlag(CLI::App* cmd, ReplayFlags& f);

enum class RuntimeChoice { kAny, kV2Only };
void AddRuntimeFlag(CLI::App* cmd, ReplayFlags& f, RuntimeChoice choice = RuntimeChoice::kAny);
// --overhead-limit X; `help` overrides the usual text (the thrash limit).
void AddOverheadLimitFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help = "");
void AddSeedFlag(CLI::App* cmd, ReplayFlags& f);
void AddJobsFlag(CLI::App* cmd, ReplayFlags& f);
// --json, with the help text naming what the command prints.
void AddJsonFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help);

// --heuristic (one, or several with many_heuristics), --runtime,
// --overhead-limit, --seed, in this order.
void AddReplayFlags(CLI::App* cmd, ReplayFlags& f, bool many_heuristics = false);

// --ratio R and --budget BYTES.
void AddBudgetFlags(CLI::App* cmd, BudgetFlags& f);
// Throws "COMMAND needs --ratio R or --budget BYTES" when neither was given.
void RequireBudget(const BudgetFlags& f, const std::string& command);

// The overhead limit as a RunSpec carries it: none for 0, else X >= 1
// (throws "--overhead-limit must be at least 1, got X" otherwise).
std::optional<double> OverheadLimit(const ReplayFlags& f);

// heuristic, runtime, overhead limit and seed of one run; ratio and budget
// unset. Throws Error for an unknown heuristic or runtime or a bad limit.
RunSpec SpecFrom(const ReplayFlags& f, const std::string& heuristic);
inline RunSpec SpecFrom(const ReplayFlags& f) { return SpecFrom(f, f.heuristic()); }

}  // namespace dtr::cli
