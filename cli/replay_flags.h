// The flags several subcommands share (the trace, --heuristic, --runtime,
// --overhead-limit, --seed, -j, --json, --ratio/--budget, the Z3 limits), added
// to a CLI11 command in one place so that each flag has one name, one help
// text and one range (cli/flag_ranges.h).
//
// A command's flag struct holds the trace, its front door request
// (api/front_door.h: defaults and checks live there) and how to print; the
// Add* functions bind flags to the request's fields, in the order its --help
// lists them.
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/replay_choice.h"
#include "checker/drivers/budget_choice.h"
#include "checker/proofs/feasibility.h"
#include "cli/flag_ranges.h"

namespace dtr::cli {

// The required positional trace argument.
void AddTraceArgument(CLI::App* cmd, std::string& trace);

// --heuristic NAME (one heuristic). `help` overrides the usual text where the
// flag means something narrower (explain: the heuristic of the run explained).
void AddHeuristicFlag(CLI::App* cmd, api::ReplayChoice& f, const std::string& help = "");
// --heuristic A,B,... (several heuristics, comma-separated); `help` overrides
// the usual text (report: one part each).
void AddHeuristicsFlag(CLI::App* cmd, std::vector<std::string>& heuristics, const std::string& help);
void AddHeuristicsFlag(CLI::App* cmd, api::ReplayChoice& f);

enum class RuntimeChoice { kAny, kV2Only };
void AddRuntimeFlag(CLI::App* cmd, std::string& runtime,
                    RuntimeChoice choice = RuntimeChoice::kAny);
inline void AddRuntimeFlag(CLI::App* cmd, api::ReplayChoice& f,
                           RuntimeChoice choice = RuntimeChoice::kAny) {
  AddRuntimeFlag(cmd, f.runtime, choice);
}
// --overhead-limit X, X >= 1; `help` overrides the usual text (the thrash limit).
void AddOverheadLimitFlag(CLI::App* cmd, std::optional<double>& limit, const std::string& help = "");
inline void AddOverheadLimitFlag(CLI::App* cmd, api::ReplayChoice& f, const std::string& help = "") {
  AddOverheadLimitFlag(cmd, f.overhead_limit, help);
}
void AddSeedFlag(CLI::App* cmd, api::ReplayChoice& f);
// -j,--jobs N, 1..1024.
void AddJobsFlag(CLI::App* cmd, int& jobs);
// --json, with the help text naming what the command prints.
void AddJsonFlag(CLI::App* cmd, bool& json, const std::string& help);

// --heuristic (one, or several with many_heuristics), --runtime,
// --overhead-limit, --seed, in this order.
void AddReplayFlags(CLI::App* cmd, api::ReplayChoice& f, bool many_heuristics = false);

// --ratio R and --budget BYTES.
void AddBudgetFlags(CLI::App* cmd, BudgetChoice& budget);

// --cliff-factor X, X > 1, with the command's help text.
void AddCliffFactorFlag(CLI::App* cmd, double& factor, const std::string& help);
// Binds flag `name` to `value`; an optional value is set only when the flag
// is given.
template <typename T>
CLI::Option* AddValueOption(CLI::App* cmd, const std::string& name, T& value, const std::string& help) {
  return cmd->add_option(name, value, help);
}
template <typename T>
CLI::Option* AddValueOption(CLI::App* cmd, const std::string& name, std::optional<T>& value,
                            const std::string& help) {
  return cmd->add_option_function<T>(name, [&value](const T& v) { value = v; }, help);
}

// --timeout SECONDS per Z3 call (api::kTimeout).
template <typename T>
void AddTimeoutFlag(CLI::App* cmd, T& seconds) {
  AddValueOption(cmd, "--timeout", seconds,
                 "seconds per Z3 call (default 0: none, --work-limit cuts the calls)")
      ->check(InRange(api::kTimeout));
}
// --work-limit N, Z3's resource limit per call (checker/proofs/feasibility.h
// SolverLimits::work_limit; api::kWorkLimit, 0: none).
template <typename T>
void AddWorkLimitFlag(CLI::App* cmd, T& limit) {
  AddValueOption(
      cmd, "--work-limit", limit,
      fmt::format(
          "Z3's resource limit per call (its rlimit; default {}, 0: none): a count, "
          "not a time, so a call is cut at the same point on any machine and under any load",
          kDefaultZ3WorkLimit))
      ->check(InRange(api::kWorkLimit));
}
// --windows N with the command's help text, and --window-ops N.
template <typename T>
void AddWindowsFlag(CLI::App* cmd, T& windows, const std::string& help) {
  AddValueOption(cmd, "--windows", windows, help)->check(InRange(api::kWindows));
}
template <typename T>
void AddWindowOpsFlag(CLI::App* cmd, T& window_ops) {
  AddValueOption(cmd, "--window-ops", window_ops, "operators per Z3 window (default 6)")
      ->check(InRange(api::kWindowOps));
}

// --checkpoint FILE, with the command's help text (what a line holds).
void AddCheckpointFlag(CLI::App* cmd, std::string& file, const std::string& help);
}  // namespace dtr::cli
