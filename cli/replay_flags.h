// The flags several subcommands share (the trace, --heuristic, --runtime,
// --overhead-limit, --seed, -j, --json, --ratio/--budget, the Z3 limits), added
// to a CLI11 command in one place so that each flag has one name, one help
// text and one range (cli/flag_ranges.h), and the RunSpec they describe is
// built in one place.
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

#include "checker/checkpoint_journal.h"
#include "checker/replay.h"
#include "checker/sweep.h"

namespace dtr::cli {

struct ReplayFlags {
  std::string trace;
  std::vector<std::string> heuristics{"DTR"};  // one entry unless added with AddHeuristicsFlag
  std::string runtime = "RuntimeV2EagerOptimized";
  double overhead_limit = 0;  // 0: none (the flag itself is at least 1)
  uint64_t seed = 0;
  int jobs = 0;  // 0: one per core (the flag itself is at least 1)
  bool json = false;

  const std::string& heuristic() const { return heuristics[0]; }
};

// One budget, as a ratio of the baseline peak memory or in bytes.
struct BudgetFlags {
  std::string ratio;
  int64_t budget = -1;  // -1: not given (the flag itself is at least 0)
};

// The required positional trace argument.
void AddTraceArgument(CLI::App* cmd, std::string& trace);

// --heuristic NAME (one heuristic). `help` overrides the usual text where the
// flag means something narrower (explain: the heuristic of the run explained).
void AddHeuristicFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help = "");
// --heuristic A,B,... (several heuristics, comma-separated).
void AddHeuristicsFlag(CLI::App* cmd, ReplayFlags& f);
// "DTR, DTREqClass, ...": every heuristic name, for help texts.
std::string HeuristicNameList();

enum class RuntimeChoice { kAny, kV2Only };
void AddRuntimeFlag(CLI::App* cmd, std::string& runtime,
                    RuntimeChoice choice = RuntimeChoice::kAny);
inline void AddRuntimeFlag(CLI::App* cmd, ReplayFlags& f,
                           RuntimeChoice choice = RuntimeChoice::kAny) {
  AddRuntimeFlag(cmd, f.runtime, choice);
}
// --overhead-limit X, X >= 1; `help` overrides the usual text (the thrash limit).
void AddOverheadLimitFlag(CLI::App* cmd, double& limit, const std::string& help = "");
inline void AddOverheadLimitFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help = "") {
  AddOverheadLimitFlag(cmd, f.overhead_limit, help);
}
void AddSeedFlag(CLI::App* cmd, ReplayFlags& f);
// -j,--jobs N, 1..1024.
void AddJobsFlag(CLI::App* cmd, int& jobs);
inline void AddJobsFlag(CLI::App* cmd, ReplayFlags& f) { AddJobsFlag(cmd, f.jobs); }
// --json, with the help text naming what the command prints.
void AddJsonFlag(CLI::App* cmd, ReplayFlags& f, const std::string& help);

// --heuristic (one, or several with many_heuristics), --runtime,
// --overhead-limit, --seed, in this order.
void AddReplayFlags(CLI::App* cmd, ReplayFlags& f, bool many_heuristics = false);

// --ratio R and --budget BYTES.
void AddBudgetFlags(CLI::App* cmd, BudgetFlags& f);
// Throws "COMMAND needs --ratio R or --budget BYTES" when neither was given.
void RequireBudget(const BudgetFlags& f, const std::string& command);

// --cliff-factor X, X > 1, with the command's help text.
void AddCliffFactorFlag(CLI::App* cmd, double& factor, const std::string& help);
// --timeout SECONDS per Z3 call, 0 < SECONDS <= 86400.
void AddTimeoutFlag(CLI::App* cmd, double& seconds);
// --work-limit N, Z3's resource limit per call (checker/feasibility.h
// SolverLimits::work_limit), 0..2^32-1 (0: none).
void AddWorkLimitFlag(CLI::App* cmd, uint32_t& limit);
// --windows N (0..1000) with the command's help text, and --window-ops N (1..1000).
void AddWindowsFlag(CLI::App* cmd, int32_t& windows, const std::string& help);
void AddWindowOpsFlag(CLI::App* cmd, int32_t& window_ops);

// --checkpoint FILE, with the command's help text (what a line holds).
void AddCheckpointFlag(CLI::App* cmd, std::string& file, const std::string& help);
// The trace as checkpoint headers name it (checker/checkpoint_journal.h):
// the SHA-256 of the file at `path`, its file name, size and baseline.
TraceFingerprint CheckpointFingerprint(const std::string& path, const Trace& trace, const Baseline& baseline);

// The overhead limit as a RunSpec carries it: none for 0, else the flag's value.
std::optional<double> OverheadLimit(double limit);
inline std::optional<double> OverheadLimit(const ReplayFlags& f) {
  return OverheadLimit(f.overhead_limit);
}

// heuristic, runtime, overhead limit and seed of one run; ratio and budget
// unset. Throws Error for an unknown heuristic or runtime.
RunSpec SpecFrom(const ReplayFlags& f, const std::string& heuristic);
inline RunSpec SpecFrom(const ReplayFlags& f) { return SpecFrom(f, f.heuristic()); }

}  // namespace dtr::cli
