// `bounds`: how far each heuristic is from what any schedule could do.
//
// For each heuristic: the smallest ratio of a grid at which its run passes
// (a coarse grid, then a finer one between the coarse neighbours of the first
// pass). Across all of
// them: the best verified schedule (the smallest peak memory of a passing
// run, whose script the schedule checker passes at exactly that peak), and
// the proven lower bound (the static bound, raised by Z3 windows bisected on
// the budget). Between the proven bound and the best verified schedule lies
// what is not known; between the best schedule and a heuristic's smallest
// feasible ratio, what a better policy could gain.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/feasibility.h"
#include "checker/memory_bound.h"
#include "checker/ratio_grid.h"
#include "checker/replay.h"
#include "checker/schedule_checker.h"
#include "model/trace.h"

namespace dtr {

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
};

struct HeuristicBound {
  const HeuristicSpec* heuristic = nullptr;
  std::optional<Ratio> smallest_feasible;  // on the grids run
  int64_t smallest_feasible_budget = 0;
  int64_t peak_there = 0;
  std::vector<Ratio> oom_above;  // grid points above it that failed (feasibility inversions)
  int32_t runs = 0;
  int32_t thrashed = 0;
};

struct VerifiedSchedule {
  const HeuristicSpec* heuristic = nullptr;
  Ratio ratio{0, ""};   // the run's ratio
  int64_t budget = 0;   // its peak memory: the budget at which the script was checked
  ScheduleCheck check;  // passed
};

struct BoundsReport {
  int64_t baseline_memory = 0;
  std::string grid, fine_step;
  MemoryBound static_bound;
  std::vector<HeuristicBound> heuristics;
  std::optional<VerifiedSchedule> best;
  int64_t proven_infeasible_below = 0;  // no schedule fits a budget below this
  std::vector<WindowBound> windows;
};

using BoundsProgress = std::function<void(const std::string& stage, size_t done, size_t total)>;

BoundsReport ComputeBounds(const Trace& trace, const Baseline& baseline,
                           const BoundsOptions& options, const BoundsProgress& progress = nullptr);

}  // namespace dtr
