// The budget curve of one heuristic on one trace, and where it is unstable.
//
// A scan replays the trace at every ratio of a grid (in ratio order) and
// finds:
//  - regimes: groups of runs that behave alike. Rule: two runs are linked
//    when they have the same outcome and, for runs that pass, both their
//    overheads and their evictions per evicted storage (all evictions) are
//    within `cliff_factor` of each other; regimes are the connected groups of
//    this relation (single linkage). All OOM runs form one regime, all
//    thrashing runs another. Numbered: passing regimes by increasing least
//    overhead (ties: lowest grid point first), then thrash, then OOM.
//  - cliffs: adjacent grid points, both passing, whose overheads differ by
//    more than `cliff_factor`;
//  - feasibility inversions: a maximal run of adjacent OOM grid points with
//    a passing grid point right below and right above it.
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
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/budget_atlas.h"
#include "checker/sweep.h"

namespace dtr {

struct ScanOptions {
  const HeuristicSpec* heuristic = nullptr;
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  std::optional<double> overhead_limit;
  uint64_t seed = 0;
  double cliff_factor = 1.5;  // > 1
  bool refine = false;
  bool exact = false;   // walk the atlas over the grid's range (see above); excludes refine
  int max_walk = 1000;  // replays per walk direction and boundary, before bisecting
  int jobs = 0;         // 0: one per core
};

// One run of the scan, or of a refinement.
struct ScanPoint {
  std::optional<Ratio> ratio;  // absent for refinement runs at a byte budget
  int64_t budget = 0;
  Outcome outcome = Outcome::kPass;
  double overhead = 0;
  int64_t evictions = 0;  // all (heuristic and eager)
  int32_t distinct_evicted = 0;
  int64_t heuristic_evictions = 0;
  int32_t distinct_heuristic_evicted = 0;
  int64_t budget_lo = 0, budget_hi = 0;  // budgets that replay identically
  int regime = -1;                       // index into ScanResult::regimes (grid points only)

  double evictions_per_storage() const {
    return distinct_evicted > 0 ? static_cast<double>(evictions) / distinct_evicted : 0.0;
  }
};

ScanPoint MakeScanPoint(const RunRecord& run);

struct GridRange {
  size_t from = 0, to = 0;  // grid point indices, inclusive
};

struct ScanRegime {
  Outcome outcome = Outcome::kPass;
  double overhead_min = 0, overhead_max = 0;
  double per_storage_min = 0, per_storage_max = 0;  // evictions per evicted storage
  size_t runs = 0;
  std::vector<GridRange> ranges;  // maximal runs of adjacent grid points in it
};

// A budget boundary located to the byte. Every claim is backed by replays:
// every byte in [lower grid budget, lower_zone_to] behaves like the lower
// grid point, every byte in [upper_zone_from, upper grid budget] like the
// upper one, and the run at last_byte behaves like the lower point while the
// run at first_byte == last_byte + 1 does not.
struct ScanBoundary {
  int64_t last_byte = 0;
  int64_t first_byte = 0;
  ScanPoint below, above;  // the runs at last_byte and first_byte
  int64_t lower_zone_to = 0, upper_zone_from = 0;
  bool lower_zone_maximal = false;  // lower_zone_to + 1 does not behave like the lower point
  bool upper_zone_maximal = false;  // upper_zone_from - 1 does not behave like the upper point
  int replays = 0;
  // The walks met: a single switch between the two grid points.
  bool sharp() const { return lower_zone_maximal && lower_zone_to + 1 == upper_zone_from; }
};

struct ScanCliff {
  size_t lower = 0, upper = 0;  // adjacent grid point indices
  double factor = 0;            // max overhead / min overhead
  std::optional<ScanBoundary> boundary;
};

struct ScanInversion {
  size_t feasible_below = 0, oom_from = 0, oom_to = 0, feasible_above = 0;  // grid point indices
  std::optional<ScanBoundary> lower_edge;  // last passing byte / first OOM byte
  std::optional<ScanBoundary> upper_edge;  // last OOM byte / first passing byte
};

struct ScanAnalysis {
  std::vector<ScanRegime> regimes;
  std::vector<ScanCliff> cliffs;
  std::vector<ScanInversion> inversions;
};

// A maximal run of adjacent OOM atlas intervals with a passing interval right
// below and right above it: a feasibility inversion located to the byte.
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
};

// Regimes, cliffs and inversions of points already in grid order (assigns
// each point's regime). Pure: no replay.
ScanAnalysis AnalyzeScan(std::vector<ScanPoint>& points, double cliff_factor);

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

// Every exact inversion of `atlas`, each linked to the grid inversion of
// `analysis` that has an OOM grid point inside it, if any.
std::vector<ExactInversion> FindExactInversions(const BudgetAtlas& atlas,
                                                const std::vector<ScanPoint>& points,
                                                const ScanAnalysis& analysis);

}  // namespace dtr
