// The budgets a report adds to the user's grid from what its atlas found
// (diagnose/atlas_coverage.h), so that the table, the regimes, the verdicts,
// the frontiers and the divergences see what the grid stepped over:
//  - a feasibility inversion of the atlas with no grid budget inside it gets
//    a decimal ratio grid over it (a zoom grid): the finest step of 1, 2 or
//    5 x 10^k, not finer than kFinestZoomStep, that puts at most
//    kZoomPointsInside ratios inside it, from the last multiple of the step
//    below it to the first above (ResNet-32's 0.1018-0.1063 gets 0.101,
//    0.102, ..., 0.107). When that puts fewer than two ratios inside (a hole
//    of a few bytes), its edge bytes instead: the last passing budget, the
//    first and last OOM ones, the first passing one;
//  - a cliff of the atlas (FindAtlasCliffs) that no cliff of the grid
//    brackets gets its two edge bytes, the largest factors first, at most
//    max_cliffs of them.
// Inversions come first, in budget order, then cliffs; at most max_budgets
// budgets in all, none already on the grid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/drivers/ratio_grid.h"
#include "diagnose/atlas_coverage.h"
#include "diagnose/budget_curve.h"

namespace dtr {

// Where a row of the report comes from.
enum class RowSource {
  kGrid,      // the user's grid (--ratios, or the default)
  kZoomGrid,  // a zoom grid over an inversion the grid stepped over
  kEdge,      // an exact edge byte of an inversion or a cliff of the atlas
};
std::string_view RowSourceName(RowSource s);  // "grid", "zoom", "edge"

struct GridAddition {
  std::optional<Ratio> ratio;  // a zoom grid's ratio ...
  int64_t budget = 0;          // ... else this byte budget (an edge)
  RowSource source = RowSource::kEdge;
  std::string reason;  // e.g. "last passing budget below the OOM budgets [a, b]"
};

struct RefineLimits {
  size_t max_budgets = 64;
  size_t max_cliffs = 3;
};

constexpr int kZoomPointsInside = 6;
constexpr double kFinestZoomStep = 1e-4;

// `grid`: the grid's points in increasing budget order with their analysis
// (AnalyzeScan); baseline_memory turns ratios into budgets as simrd does.
std::vector<GridAddition> RefineGrid(const AtlasCoverage& coverage,
                                     const std::vector<ScanPoint>& grid,
                                     const ScanAnalysis& analysis, int64_t baseline_memory,
                                     double cliff_factor, const RefineLimits& limits = {});

}  // namespace dtr
