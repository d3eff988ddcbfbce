// `bounds`: how far each heuristic is from what any schedule could do.
//
// For each heuristic: the smallest ratio of a grid at which its run passes
// (a coarse grid, then a finer one between the coarse neighbours of the first
// pass). Across all of
// them: the best verified schedule (the smallest peak memory of a passing
// run, whose script the schedule checker passes at exactly that peak), and
// the proven lower bound (the static bound, raised by Z3 windows bisected on
// the budget).
//
// The checkpoint plans (diagnose/schedule_search.h) then build low-memory
// scripts from the top, independent of any heuristic. If none of them is
// below the best grid run, the walk-down lowers that run's schedule with
// prove's witness search (diagnose/schedule_witness.h: runs at and below the budget,
// counterfactuals, a next-use policy, Z3 plans): it asks for a script at a
// budget below the best peak, takes a passing script's own peak as the new
// best (re-checked by the schedule checker at exactly that peak), and goes on
// until a search one byte below the best fails (kStep, kGallop) or the
// interval is narrow (kBisect), or after options.walk_searches searches (or
// --search-seconds, if given). Nothing it finds is trusted without the checker.
// (When a plan is below the grid's best, the walk is skipped: it searches
// just below a heuristic's run, so nothing it finds could be the best, and
// on the large traces its searches take minutes.) The lowest verified peak of
// all is the best schedule.
// Between the proven bound and the best verified schedule lies what is not known; between the best
// schedule and a heuristic's smallest feasible ratio, what a better policy could gain.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "checker/engine/replay.h"
#include "checker/proofs/cut_bound.h"
#include "checker/proofs/eviction_script.h"
#include "checker/proofs/feasibility.h"
#include "checker/proofs/memory_bound.h"
#include "checker/proofs/schedule_checker.h"
#include "diagnose/certificate_store.h"
#include "diagnose/schedule_search.h"
#include "diagnose/schedule_witness.h"
#include "model/trace.h"

namespace dtr {

// How the walk-down picks the next budget to ask the witness search for.
enum class WalkMode {
  kStep,    // one byte below the best peak; stop at the first search that fails
  kGallop,  // `stride` below the best peak: the stride doubles after a script is found and
            // drops to a quarter after a failure; stop when a search one byte below fails
  kBisect,  // halfway between the highest failed budget (at first the proven bound) and the best
};

struct BoundsOptions {
  std::vector<const HeuristicSpec*> heuristics;  // empty: DTR
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  std::string grid = "0.01:1:0.01";      // coarse grid; points below the static bound are not run
  std::string fine_step = "0.001";       // "" for no refinement
  std::optional<double> overhead_limit;  // runs beyond it count as not feasible (thrash)
  int jobs = 0;
  int32_t windows = 3;  // Z3 windows bisected for the lower bound (0: static bound only)
  int32_t window_ops = 6;
  SolverLimits limits;
  double resolution_ratio = 0.0001;  // bisection stops within this fraction of the baseline
  // The walk-down below the best grid run: at most this many witness searches
  // (0: no walk-down), each bounded by its own counts (WitnessOptions) and Z3
  // calls by `limits`: a count, so the walk finds the same schedules on any
  // machine and under any load.
  int32_t walk_searches = 8;
  // An optional time limit on the walk-down as a whole (0: no walk-down;
  // infinite, the default: none). Only when it is finite does a search in
  // flight, and each of its Z3 calls, get the time left as a deadline.
  double search_seconds = std::numeric_limits<double>::infinity();
  WalkMode walk = WalkMode::kGallop;
  int32_t counterfactuals = 24;  // per witness search (WitnessOptions::counterfactuals)
  // Checkpoint plans (diagnose/schedule_search.h) after the walk-down: the
  // computations they may follow in all (a count: the same answer on any
  // machine and under any load; 0: no limit), seconds for the search (0:
  // none; infinite: no time limit), and the compute overhead a plan may have.
  int64_t plan_work = 500'000'000;
  double plan_seconds = std::numeric_limits<double>::infinity();
  std::optional<double> plan_max_overhead;
  // Checkpoint plans only: no heuristic grid and no walk-down.
  bool plans_only = false;
  // Each grid run stops (unknown) once its heuristic evaluations plus
  // computations pass this (ReplaySettings::work_limit; 0: none). Low
  // budgets thrash: TreeLSTM's runs below ratio 0.09 take minutes each.
  int64_t run_max_evals = 100'000'000;
  // The keep-or-recompute cut (checker/proofs/cut_bound.h), bisected between the
  // static bound and the best schedule to its resolution, within this many
  // seconds (0: none; infinite: no time limit, the same answer everywhere).
  double cut_seconds = std::numeric_limits<double>::infinity();
  RunWatch* watch = nullptr;  // sees the grid runs as they go (RunMany's)
};

struct HeuristicBound {
  const HeuristicSpec* heuristic = nullptr;
  std::optional<Ratio> smallest_feasible;  // on the grids run
  int64_t smallest_feasible_budget = 0;
  int64_t peak_there = 0;
  std::vector<Ratio> oom_above;  // grid points above it that failed (feasibility inversions)
  // Grid points whose run stopped at options.run_max_evals: unknown, so the
  // smallest feasible ratio is the smallest of the runs that ended.
  std::vector<Ratio> stopped;
  int32_t runs = 0;
  int32_t thrashed = 0;
  // Runs that stopped where simrd stops with an assertion (checker/engine/engine.h,
  // SimrdAssertionError): they have no outcome and count as not passing; the
  // heuristic's other runs, and the rest of the answer, stand.
  int32_t simrd_assertions = 0;
  std::optional<Ratio> simrd_assertion_at;  // the lowest such ratio ...
  std::string simrd_assertion;              // ... and what simrd asserts there
};

struct VerifiedSchedule {
  // "grid run" (a heuristic's run on the grid), "checkpoint plan" (the
  // schedule search), else the witness source ("run", "lower-budget run",
  // "counterfactual", "next-use", "z3 plan", ...).
  std::string source = "grid run";
  std::string description;                   // what produced the script, for people
  const HeuristicSpec* heuristic = nullptr;  // grid run: its heuristic; else null
  Ratio ratio{0, ""};                        // grid run: the run's ratio
  int64_t budget = 0;    // its peak memory: the budget at which the script was checked
  int64_t asked_at = 0;  // walk-down: the budget the witness search was asked for
  EvictionScript script;
  ScheduleCheck check;  // of `script` at `budget`: passed
};

// One witness search of the walk-down.
struct WalkStep {
  int64_t budget = 0;               // asked for
  bool found = false;               // a script passed the checker at `budget`
  std::string source, description;  // the witness's (found)
  int64_t peak = 0;                 // its peak (found): the new best
  size_t attempts = 0;              // witness attempts made
  double seconds = 0;
  std::string last_outcome;  // not found: what the last attempt said
};

struct BoundsReport {
  int64_t baseline_memory = 0;
  std::string grid, fine_step;
  MemoryBound static_bound;
  std::vector<HeuristicBound> heuristics;
  std::optional<VerifiedSchedule> grid_best;  // the best grid run (the walk's start)
  std::optional<VerifiedSchedule> best;       // after the walk-down and the checkpoint plans
  WalkMode walk_mode = WalkMode::kGallop;
  std::vector<WalkStep> walk;
  double walk_seconds = 0;      // wall time, for people; in no deterministic output
  bool walk_timed_out = false;  // the walk stopped at --search-seconds, not at a failed search
  bool walk_search_limited = false;  // the walk stopped after options.walk_searches searches
  bool walk_skipped = false;         // a checkpoint plan was already below the grid's best
  // The checkpoint plans tried (best.script moved into `best` if it was lower).
  std::optional<ScheduleSearch> plan_search;
  int64_t proven_infeasible_below = 0;  // no schedule fits a budget below this
  // The argument that proves proven_infeasible_below, and for kWindow the window.
  BoundArgument lower_bound_argument = BoundArgument::kStatic;
  OpWindow lower_bound_window;
  std::optional<CutBound> cut;  // the keep-or-recompute cut, if run
  std::vector<WindowBound> windows;
};

using BoundsProgress = std::function<void(const std::string& stage, size_t done, size_t total)>;
// One line of status during the walk-down (a witness search, its attempts).
using BoundsStatus = std::function<void(const std::string& text)>;

BoundsReport ComputeBounds(const Trace& trace, const Baseline& baseline,
                           const BoundsOptions& options, const BoundsProgress& progress = nullptr,
                           const BoundsStatus& status = nullptr);

// The walk-down alone, from a verified schedule `start` (its budget is its
// peak). `lower_bound`: no schedule fits below it (kBisect starts there).
// Fills report.best, walk, walk_seconds, walk_timed_out, walk_search_limited.
std::string_view WalkModeName(WalkMode mode);     // "step", "gallop", "bisect"
// The checkpoint plans alone (options.plan_seconds, plan_max_overhead):
// fills report.plan_search and, when its verified schedule is lower than
// report.best (or there is none), makes it report.best.
void SearchPlannedSchedule(const Trace& trace, const Baseline& baseline,
                           const BoundsOptions& options, BoundsReport& report,
                           const BoundsStatus& status = nullptr);
WalkMode ParseWalkMode(const std::string& name);  // throws Error
void WalkDownBestSchedule(const Trace& trace, const Baseline& baseline,
                          const BoundsOptions& options, const VerifiedSchedule& start,
                          int64_t lower_bound, BoundsReport& report,
                          const BoundsStatus& status = nullptr);

}  // namespace dtr
