// The exact budget atlas (checker/drivers/budget_atlas.h) of a report's range,
// walked within a cap of replays and heuristic evaluations.
//
// A whole range can hold tens of thousands of atlas intervals (ResNet-32 has
// about 1,500 between ratios 0.10 and 0.15 alone), so the walk does not go
// blindly up from the range's start. It goes window by window, a window being
// the bytes between two adjacent grid budgets, in this order:
//  1. windows whose two grid runs differ in outcome (a feasibility boundary
//     lies inside), lowest first;
//  2. windows from the lowest passing grid run up, lowest first: a
//     feasibility inversion lies above some passing budget, and they cluster
//     just above the smallest one (ResNet-32, the demo);
//  3. windows below the lowest passing grid run, highest first (all of them
//     when no grid run passes).
// Each window is walked exactly (BuildAtlas, with `jobs` workers) with what
// is left of the cap. The window where the cap is reached keeps the
// intervals walked before it (BudgetAtlas::prefix); windows after it are
// not walked, and their budgets are known only at grid points.
//
// The cap counts replays and their heuristic evaluations as BuildAtlas does
// (intervals in budget order within a window), so the coverage, the
// intervals and the counts are the same for every `jobs`, every machine and
// every load: no clock is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "checker/drivers/budget_atlas.h"
#include "checker/drivers/sweep.h"
#include "diagnose/budget_curve.h"

namespace dtr {

enum class WindowReason {
  kOutcomeChange,   // its two grid runs differ in outcome
  kAboveFirstPass,  // at or above the lowest passing grid run
  kBelowFirstPass,  // below it
};
std::string_view WindowReasonName(WindowReason r);  // "outcome change", ...

// One window: [lo, hi] bytes between two adjacent grid budgets (the lower one
// included; the upper one too for the last window).
struct AtlasWindow {
  int64_t lo = 0, hi = 0;
  WindowReason reason = WindowReason::kAboveFirstPass;
  size_t replays = 0;        // spent on it (0: not walked)
  int64_t walked_bytes = 0;  // from lo: hi - lo + 1 when complete
  bool complete() const { return walked_bytes == hi - lo + 1; }
};

struct AtlasCoverage {
  int64_t lo = 0, hi = 0;  // the range: the lowest and highest grid budget
  AtlasCap cap;            // the budget
  size_t replays = 0;      // spent
  int64_t evals = 0;       // heuristic evaluations spent
  // Some window was not walked, or only in part, because the cap was reached.
  bool budget_ran_out = false;
  std::vector<AtlasWindow> windows;  // in the order they were walked
  // The walked stretches, maximal, in budget order: each a complete atlas of
  // its own [lo, hi] (adjacent windows' intervals joined; a run crossing
  // their seam is one interval). `runs` is the replays spent on it.
  std::vector<BudgetAtlas> sections;

  int64_t covered() const;  // bytes walked
  bool complete() const { return sections.size() == 1 && sections[0].lo == lo && sections[0].hi == hi; }
  // The section holding `budget`, if one does.
  std::optional<size_t> SectionAt(int64_t budget) const;
  // The stretches of [lo, hi] not walked, in budget order.
  std::vector<std::pair<int64_t, int64_t>> Gaps() const;
  // Maximal stretches of adjacent infeasible (OOM or thrash) intervals
  // inside the sections, exact in bytes, in budget order.
  std::vector<std::pair<int64_t, int64_t>> Infeasible() const;
};

// Walks the atlas over [lowest, highest] budget of `grid` (points in
// increasing budget order, as AnalyzeScan takes them) within `cap`, in the
// window order above. `spec` gives heuristic, runtime, overhead limit and
// seed. progress(thousandths of the cap spent, 1000), the cap's larger part.
// Throws Error for fewer than two distinct budgets or no cap.
AtlasCoverage WalkAtlasWithin(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                              const std::vector<ScanPoint>& grid, AtlasCap cap, int jobs,
                              const ProgressFn& progress = nullptr);

// A cliff of the atlas: adjacent passing intervals of one section whose
// overheads differ by more than the cliff factor (diagnose/budget_curve.h's
// rule, applied to atlas intervals instead of grid points).
struct AtlasCliff {
  size_t section = 0;
  size_t lower = 0;  // interval index in the section; the upper one is lower + 1
  int64_t last_byte = 0, first_byte = 0;
  double overhead_below = 0, overhead_above = 0;
  double factor = 0;
};
std::vector<AtlasCliff> FindAtlasCliffs(const AtlasCoverage& coverage, double cliff_factor);

}  // namespace dtr
