// `dtrcheck scan`: the budget curve of one heuristic on one trace over a
// ratio grid, analyzed as diagnose/budget_curve.h defines regimes, cliffs and
// feasibility inversions.
//
// A scan replays the trace at every ratio of the grid (in ratio order).
// With `refine`, each cliff and each edge of an inversion is located to the
// byte. Every replay reports the whole interval of budgets that replay it
// identically (RunResult::budget_lo/hi), so the search walks one interval per
// replay: upward from the lower grid point while runs behave like it, and
// downward from the upper grid point while runs behave like that one. A run
// "behaves like" a side when it has that side's outcome and, when both sides
// share their outcome (a cliff), an overhead closer to that side's (in ratio).
// Between the two walks there can be a mixed zone where behaviours alternate
// (ResNet-32 above ratio 0.106 has one); the boundary is sharp when the walks
// meet. A walk that reaches `max_walk` replays stops, and the switch is then
// found by bisection between the walked limits.
// With `exact`, the atlas over the grid's range gives every boundary with no
// further replay, and the inversions of the atlas itself (which the grid can
// step over).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/drivers/budget_atlas.h"
#include "checker/drivers/sweep.h"
#include "diagnose/budget_curve.h"
#include "diagnose/budget_headline.h"

namespace dtr {

struct ScanOptions : ReplaySettings {
  double cliff_factor = kDefaultCliffFactor;  // > 1
  bool refine = false;
  bool exact = false;   // walk the atlas over the grid's range (see above); excludes refine
  int max_walk = 1000;  // replays per walk direction and boundary, before bisecting
  int jobs = 0;         // 0: one per core
  // To continue an interrupted scan and record its progress (not owned):
  // the grid replays (RunMany's journal), or the walk of an exact scan
  // (BuildAtlas's). Refinement searches are not journaled.
  const GridJournal* grid_journal = nullptr;
  const AtlasJournal* atlas_journal = nullptr;
  RunWatch* watch = nullptr;  // sees the grid's replays as they go (RunMany's)
};

// A feasibility inversion (diagnose/budget_curve.h) of the atlas intervals
// themselves: located to the byte, and found even where the grid steps over it.
struct ExactInversion {
  int64_t last_feasible_byte = 0, first_oom_byte = 0;
  int64_t last_oom_byte = 0, first_feasible_byte = 0;
  size_t first_interval = 0, last_interval = 0;  // the OOM run, atlas interval indices
  // The grid inversion (index into ScanAnalysis::inversions) one of whose OOM
  // grid points lies in [first_oom_byte, last_oom_byte]; none: the grid missed it.
  std::optional<size_t> grid_inversion;
  int64_t oom_width() const { return last_oom_byte - first_oom_byte + 1; }
  bool missed_by_grid() const { return !grid_inversion; }
};

// Adjacent grid points in different regimes, with the boundary between them
// (exact scans only).
struct ScanRegimeChange {
  size_t lower = 0, upper = 0;  // grid point indices
  ScanBoundary boundary;
};

struct ScanResult {
  const HeuristicSpec* heuristic = nullptr;
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  double cliff_factor = 0;
  Baseline baseline;
  std::vector<ScanPoint> points;  // in grid order; regime filled in
  ScanAnalysis analysis;
  int64_t refine_replays = 0;
  // Exact scans only: the atlas over the grid's range, its inversions, and
  // every regime change of the grid located in it.
  std::optional<BudgetAtlas> atlas;
  std::vector<ExactInversion> exact_inversions;
  std::vector<ScanRegimeChange> regime_changes;
  // The answer first: the smallest passing budget known to the byte, the
  // failing bands, the static floor, the worst cliff between neighbouring
  // budgets (diagnose/budget_headline.h). No verdicts: a scan proves nothing.
  BudgetHeadline headline;
};

// Sweeps `ratios` (sorted here by value), analyzes, and refines if asked.
// progress(done, total) counts grid runs, then refinement replays; in an
// exact scan, bytes of the range covered by the atlas walk.
// Throws Error if both refine and exact are set.
ScanResult ScanInstability(const Trace& trace, const Baseline& baseline,
                           const std::vector<Ratio>& ratios, const ScanOptions& options,
                           const ProgressFn& progress = nullptr);

// Locates the boundary above grid run `lower` and below `upper` (budgets
// lower.budget < upper.budget, different behaviour). Exposed for tests.
ScanBoundary LocateBoundary(const Trace& trace, const Baseline& baseline,
                            const ScanOptions& options, const ScanPoint& lower,
                            const ScanPoint& upper);

// The boundary above grid run `lower` and below `upper`, read off an atlas
// that covers both budgets: the same answer LocateBoundary gives with
// unlimited walks (both zones maximal), with no replay. The runs at
// last_byte and first_byte carry those bytes as their budgets.
ScanBoundary BoundaryFromAtlas(const BudgetAtlas& atlas, const ScanPoint& lower,
                               const ScanPoint& upper);

// The run of an atlas interval as a scan point at `budget` (inside it).
ScanPoint PointOfInterval(const AtlasInterval& interval, int64_t budget);

// Fills the boundaries of `analysis` (cliffs, inversion edges) over grid
// points read off or replayed inside `atlas`, from the atlas (BoundaryFromAtlas);
// adjacent points in one atlas interval are one run and get none. With
// `changes`, also lists every pair of adjacent points in different regimes
// with its boundary.
void ReadBoundariesOffAtlas(const BudgetAtlas& atlas, const std::vector<ScanPoint>& points,
                            ScanAnalysis& analysis,
                            std::vector<ScanRegimeChange>* changes = nullptr);

// Every exact inversion of `atlas`, each linked to the grid inversion of
// `analysis` that has an OOM grid point inside it, if any.
std::vector<ExactInversion> FindExactInversions(const BudgetAtlas& atlas,
                                                const std::vector<ScanPoint>& points,
                                                const ScanAnalysis& analysis);

}  // namespace dtr
