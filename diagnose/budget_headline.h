// The answer a reader wants before any table: the smallest budget that
// passes, where budgets fail and why, the floor no schedule gets under, and
// the worst cliff. Plain data, computed once from a report (or from a scan's
// rows alone); reports/report_headline.h renders it first in every report
// form.
//
// Every number is exact or says it is not:
//  - a run's exact budget interval (RunResult::budget_lo/hi) and the atlas's
//    intervals replay identically at every byte, so the budgets they cover
//    are known to the byte; nothing between them is guessed;
//  - the smallest passing budget is the lowest known passing byte; it is
//    exact when every budget from the proven floor up to it is known to fail;
//  - the floor is proven: the static bound (checker/proofs/memory_bound.h), raised
//    by every inherent verdict whose certificate holds (an infeasible budget
//    makes every smaller one infeasible: a script fitting a smaller budget
//    fits it too);
//  - a cliff is only between budgets that are neighbours to the byte (a
//    walked section of the atlas, or two rows whose intervals touch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/proofs/memory_bound.h"
#include "diagnose/atlas_coverage.h"
#include "diagnose/budget_curve.h"
#include "diagnose/oom_classification.h"
#include "model/trace.h"

namespace dtr {

struct ReportModel;

// A maximal stretch of budgets known to fail, and the verdicts of the OOM
// runs in it.
struct FailingBand {
  int64_t lo = 0, hi = 0;  // bytes, inclusive
  // Passing budgets are known right below and right above it: a feasibility
  // inversion (else it is the stretch under the smallest passing budget).
  bool inversion = false;
  int policy_induced = 0, inherent = 0, undetermined = 0;  // verdicts in it
  int64_t width() const { return hi - lo + 1; }
};

struct HeadlineCliff {
  int64_t last_byte = 0, first_byte = 0;  // neighbours: first_byte == last_byte + 1
  double overhead_below = 0, overhead_above = 0;
  double factor = 0;
};

struct BudgetHeadline {
  std::string heuristic;
  int64_t baseline_memory = 0;
  // The lowest budget known to pass; absent when nothing passed.
  std::optional<int64_t> smallest_pass;
  // Every budget from `floor` to smallest_pass - 1 is known to fail. When
  // not, [unknown_lo, unknown_hi] is the lowest stretch not known.
  bool smallest_pass_exact = false;
  int64_t unknown_lo = 0, unknown_hi = 0;
  std::vector<FailingBand> bands;  // in budget order, all at or above the floor
  // The proven floor: every budget below it fails for every schedule.
  int64_t floor = 0;
  std::string floor_cause;  // what proves it, in words
  std::optional<HeadlineCliff> worst_cliff;
  double cliff_factor = 0;
  bool verdicts = false;  // verdicts were computed (the band counts mean something)
};

// The headline of a scan's rows (points in budget order, as AnalyzeScan took
// them), with the atlas over them and the verdict of each point, when there
// are (verdicts: one entry per point, nullopt where there is none).
BudgetHeadline HeadlineOf(const Trace& trace, const std::string& heuristic, int64_t baseline_memory,
                          const std::vector<ScanPoint>& points, double cliff_factor,
                          const AtlasCoverage* atlas,
                          const std::vector<const Classification*>* verdicts);
// What proves the static floor, in words: "static bound: OPERATOR needs ..."
// or "... the storages pinned at the end of the program".
std::string StaticFloorCause(const Trace& trace, const MemoryBound& bound);
// The headline of one heuristic's part of a report.
BudgetHeadline HeadlineOf(const Trace& trace, const ReportModel& model);

}  // namespace dtr
