// The budget curve of one heuristic on one trace, and the words dtrcheck uses
// for its shape. This file is the one place they are defined; `dtrcheck scan`,
// `ablate` and `report` all call AnalyzeScan, and the renderers in reports/
// only show what it returns.
//
// The curve is a list of points (runs) in increasing budget order: grid
// points, or atlas intervals. Over it:
//  - a regime is a group of runs that behave alike. Two runs are linked when
//    they have the same outcome and, for runs that pass, both their overheads
//    and their evictions per evicted storage (all evictions) are within
//    `cliff_factor` of each other (larger / smaller <= cliff_factor); regimes
//    are the connected groups of this relation (single linkage). All OOM runs
//    form one regime, all thrashing runs another, all runs stopped by a work
//    limit (ReplaySettings::work_limit: unknown) another. Numbered: passing
//    regimes by increasing least overhead (ties: lowest point first), then
//    thrash, then OOM, then stopped.
//  - a cliff is a pair of adjacent points, both passing, whose overheads
//    differ by more than `cliff_factor` (larger / smaller > cliff_factor: the
//    negation of the overhead half of the link above).
//  - a feasibility inversion is a maximal stretch of adjacent OOM points with
//    a passing point right below it and right above it: budgets that run out
//    of memory between budgets that do not. An OOM stretch at either end of
//    the curve, or next to a thrashing or stopped point, is not one (nothing shows that
//    a larger budget passes again right above it). This is DESIGN.md's "OOM
//    at B2 with a feasible B1 < B2" made precise: B1 is the pass right below
//    the stretch, and the pass right above bounds it.
//  - a boundary is where the behaviour switches between two adjacent points,
//    located to the byte (see ScanBoundary). It is known without a replay when
//    the two runs' own exact budget intervals touch; `scan --refine` locates
//    the others by replays, `scan --exact` and the report read them off the
//    atlas.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "checker/farm/farm_codec.h"

namespace dtr {

// One run of the curve: a grid point, or a run at a byte budget.
struct ScanPoint {
  std::optional<Ratio> ratio;  // absent for runs at a byte budget
  int64_t budget = 0;
  Outcome outcome = Outcome::kPass;
  double overhead = 0;
  int64_t evictions = 0;  // all (heuristic and eager)
  int32_t distinct_evicted = 0;
  int64_t heuristic_evictions = 0;
  int32_t distinct_heuristic_evicted = 0;
  int64_t budget_lo = 0, budget_hi = 0;  // budgets that replay identically
  int regime = -1;                       // index into ScanAnalysis::regimes (once analyzed)

  double evictions_per_storage() const {
    return distinct_evicted > 0 ? static_cast<double>(evictions) / distinct_evicted : 0.0;
  }
};

ScanPoint MakeScanPoint(const RunRecord& run);

struct GridRange {
  size_t from = 0, to = 0;  // point indices, inclusive
};

struct ScanRegime {
  Outcome outcome = Outcome::kPass;
  double overhead_min = 0, overhead_max = 0;
  double per_storage_min = 0, per_storage_max = 0;  // evictions per evicted storage
  size_t runs = 0;
  std::vector<GridRange> ranges;  // maximal runs of adjacent points in it
};

// A budget boundary located to the byte. Every claim is backed by replays:
// every byte in [lower point's budget, lower_zone_to] behaves like the lower
// point, every byte in [upper_zone_from, upper point's budget] like the upper
// one, and the run at last_byte behaves like the lower point while the run
// at first_byte == last_byte + 1 does not.
struct ScanBoundary {
  int64_t last_byte = 0;
  int64_t first_byte = 0;
  ScanPoint below, above;  // the runs at last_byte and first_byte
  int64_t lower_zone_to = 0, upper_zone_from = 0;
  bool lower_zone_maximal = false;  // lower_zone_to + 1 does not behave like the lower point
  bool upper_zone_maximal = false;  // upper_zone_from - 1 does not behave like the upper point
  int replays = 0;
  // The walks met: a single switch between the two points.
  bool sharp() const { return lower_zone_maximal && lower_zone_to + 1 == upper_zone_from; }
};

// The boundary between two adjacent runs whose exact budget intervals touch
// (lower.budget_hi + 1 == upper.budget_lo): every budget up to lower.budget_hi
// is the lower run, every budget from upper.budget_lo the upper one, so it is
// sharp and needs no replay. What LocateBoundary returns for the same pair.
std::optional<ScanBoundary> TouchingBoundary(const ScanPoint& lower, const ScanPoint& upper);

struct ScanCliff {
  size_t lower = 0, upper = 0;  // adjacent point indices
  double factor = 0;            // max overhead / min overhead
  std::optional<ScanBoundary> boundary;
};

struct ScanInversion {
  size_t feasible_below = 0, oom_from = 0, oom_to = 0, feasible_above = 0;  // point indices
  std::optional<ScanBoundary> lower_edge;  // last passing byte / first OOM byte
  std::optional<ScanBoundary> upper_edge;  // last OOM byte / first passing byte
};

struct ScanAnalysis {
  std::vector<ScanRegime> regimes;
  std::vector<ScanCliff> cliffs;
  std::vector<ScanInversion> inversions;
};

// The cliff factor every command uses unless told otherwise (scan, ablate,
// report, and the Python module alike).
inline constexpr double kDefaultCliffFactor = 1.25;

// Whether two adjacent passing runs with these overheads form a cliff, and by
// what factor (larger / smaller overhead).
bool IsCliff(double overhead_a, double overhead_b, double cliff_factor);
double OverheadFactor(double overhead_a, double overhead_b);

// The feasibility inversions of any list of outcomes in increasing budget
// order (grid points, atlas intervals): [first, last] index of each maximal
// OOM stretch with kPass right below and right above.
std::vector<std::pair<size_t, size_t>> FindInversionStretches(const std::vector<Outcome>& outcomes);

// Regimes, cliffs and inversions of points in increasing budget order
// (assigns each point's regime); the boundaries of cliffs and inversion edges
// whose runs touch are filled in (TouchingBoundary). Pure: no replay. Throws
// Error unless cliff_factor > 1.
ScanAnalysis AnalyzeScan(std::vector<ScanPoint>& points, double cliff_factor);

// A maximal stretch of adjacent OOM points, whether or not it is an
// inversion (the budget report draws each one).
struct OomStretch {
  size_t from = 0, to = 0;  // point indices, inclusive
  // Index into ScanAnalysis::inversions when the stretch is one.
  std::optional<size_t> inversion;
  // Byte intervals known to OOM: the points' [budget_lo, budget_hi], adjacent
  // ones merged, in increasing order. Budgets between them were not replayed.
  std::vector<std::pair<int64_t, int64_t>> known_oom;
  // The boundary with the point right below (above) the stretch is known
  // without a replay: their runs' intervals touch (TouchingBoundary).
  bool exact_lower_edge = false, exact_upper_edge = false;
};

std::vector<OomStretch> FindOomStretches(const std::vector<ScanPoint>& points,
                                         const ScanAnalysis& analysis);

// A boundary as bytes (diagnose/farm_codecs.cc), so that `scan --refine`
// can locate boundaries on MPI ranks (checker/farm/parallel.h).
template <>
struct FarmCodec<ScanBoundary> {
  static void Encode(const ScanBoundary& b, ByteWriter& w);
  static ScanBoundary Decode(ByteReader& r);
};

}  // namespace dtr
