// The search for a low-memory schedule from the top: retention plans
// (checker/proofs/checkpoint_planner.h) followed on the engine, the lowest
// peak kept, its script verified by the schedule checker at exactly that peak.
//
// Plans tried, within the time limit:
//  1. a grid of recompute-cost rules (PlanByRecomputeCost): cost fractions
//     from 0.5 down to 0.005 of the program's compute, recomputation traced
//     from retained storages or from the constants, small storages retained
//     or not;
//  2. around the best of them, cost fractions closer to it (the peak is not
//     monotone in the fraction), thresholds lowered by the bytes held (with
//     limits near what the best peak holds beyond its pinned storages),
//     thresholds tilted toward the end of the program, then retention
//     horizons of a few steps;
//  3. a local search, storage by storage, at the peak: stop retaining a
//     storage held there, or retain one that is recomputed there, as long as
//     the peak (or the number of steps near it) goes down.
// With max_overhead, plans whose compute overhead exceeds it are not taken
// (they are listed as attempts).
// Plans are followed two at a time, side by side (a fixed pair, so the plans
// taken and the work counted are the same at any -j), each pair with the
// options of its start (the work left, the best peak so far as a cap), and
// taken in order: a local-search move after an improving one in its pair is
// not taken, and counts as not tried.
// Only a script that the schedule checker passes at its own peak is returned;
// that peak is an upper end for the smallest feasible budget: the script
// passes at every budget at least as large.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/engine/replay.h"
#include "checker/proofs/checkpoint_planner.h"
#include "checker/proofs/eviction_script.h"
#include "checker/proofs/schedule_checker.h"
#include "model/trace.h"

namespace dtr {

struct ScheduleSearchOptions {
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;  // a RuntimeV2 runtime
  double seconds = 60;                 // wall time for the whole search; 0: no limit
  int64_t max_events = 20'000'000;     // per followed plan
  // Computations followed over the whole search (0: no limit): a count, so
  // the search stops at the same plan on any machine and under any load.
  int64_t max_work = 0;
  std::optional<double> max_overhead;  // compute overhead allowed (clock / baseline compute)
  bool refine = true;                  // steps 2 and 3 (else the grid only)
  // Stop as soon as a plan's peak is at most this (-1: search for the lowest).
  int64_t good_enough = -1;
  int jobs = 0;  // threads following plans side by side (0: one per core); same result for any
};

// One plan followed.
struct PlanAttempt {
  std::string description;
  bool completed = false;
  std::string stopped;  // not completed: why
  int64_t peak = 0;
  int64_t events = 0;
  double overhead = 0;  // estimated from the computations made: (1 + compute) / baseline compute
  double seconds = 0;
};

struct PlannedSchedule {
  std::string description;  // the plan
  RetentionPlan plan;
  EvictionScript script;
  int64_t peak = 0;     // the budget at which the checker passed it
  ScheduleCheck check;  // at `peak`: passed
  double overhead = 0;  // of the checked run
  PeakState at_peak;    // what memory held at the peak, per the follower
};

struct ScheduleSearch {
  std::optional<PlannedSchedule> best;
  std::vector<PlanAttempt> attempts;  // in order
  double seconds = 0;
  bool timed_out = false;
  int64_t work = 0;            // computations followed
  bool work_limited = false;   // stopped at max_work
};

using ScheduleSearchStatus = std::function<void(const std::string&)>;

// Throws Error for RuntimeV1, and (internal error) if a script the follower
// completed fails the schedule checker at its peak.
ScheduleSearch SearchRetentionPlans(const Trace& trace, const Baseline& baseline,
                                    const ScheduleSearchOptions& options,
                                    const ScheduleSearchStatus& status = nullptr);

}  // namespace dtr
