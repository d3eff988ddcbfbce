#include "diagnose/grid_refinement.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "checker/drivers/budget_choice.h"
#include "checker/engine/replay.h"

namespace dtr {

namespace {

// Steps 0.5, 0.2, 0.1, 0.05, ... down to kFinestZoomStep, as (mantissa, exponent).
std::vector<std::pair<int, int>> ZoomSteps() {
  std::vector<std::pair<int, int>> out;
  for (int e = -1; e >= -4; --e)
    for (int m : {5, 2, 1}) out.push_back({m, e});
  return out;
}

// The ratio m * step as decimal text parsed like the user's grid.
Ratio RatioAt(int64_t m, int mantissa, int exponent) {
  const int decimals = -exponent;
  // m * mantissa * 10^exponent, written exactly in decimal.
  const int64_t units = m * mantissa;
  std::string digits = std::to_string(units);
  if (static_cast<int>(digits.size()) <= decimals)
    digits = std::string(decimals + 1 - digits.size(), '0') + digits;
  std::string text = digits.substr(0, digits.size() - decimals) + "." + digits.substr(digits.size() - decimals);
  return ParseRatio(text);
}

// The zoom grid over OOM budgets [first, last]: ratios from the last multiple
// of the step below `first` to the first above `last`; empty when no step of
// ZoomSteps() puts two or more ratios inside.
std::vector<Ratio> ZoomGrid(int64_t first, int64_t last, int64_t baseline_memory) {
  const double base = static_cast<double>(baseline_memory);
  std::vector<Ratio> best;
  for (const auto& [mantissa, exponent] : ZoomSteps()) {
    const double step = mantissa * std::pow(10.0, exponent);
    const int64_t m_lo = static_cast<int64_t>(std::floor(static_cast<double>(first) / base / step)) - 1;
    const int64_t m_hi = static_cast<int64_t>(std::ceil(static_cast<double>(last) / base / step)) + 1;
    std::vector<Ratio> ratios;
    int inside = 0;
    for (int64_t m = m_lo; m <= m_hi; ++m) {
      if (m <= 0) continue;
      Ratio r = RatioAt(m, mantissa, exponent);
      int64_t b = BudgetChoice::OfRatio(r, baseline_memory);
      inside += first <= b && b <= last;
      ratios.push_back(std::move(r));
    }
    if (inside > kZoomPointsInside) break;  // finer steps put even more inside
    // Keep from the last ratio below `first` to the first above `last`.
    std::vector<Ratio> kept;
    for (size_t i = 0; i < ratios.size(); ++i) {
      int64_t b = BudgetChoice::OfRatio(ratios[i], baseline_memory);
      bool below_next = i + 1 < ratios.size() &&
                        BudgetChoice::OfRatio(ratios[i + 1], baseline_memory) < first;
      bool above_prev = i > 0 && BudgetChoice::OfRatio(ratios[i - 1], baseline_memory) > last;
      if (!below_next && !above_prev && b > 0) kept.push_back(ratios[i]);
    }
    if (inside >= 2) best = std::move(kept);
  }
  return best;
}

}  // namespace

std::string_view RowSourceName(RowSource s) {
  switch (s) {
    case RowSource::kGrid:
      return "grid";
    case RowSource::kZoomGrid:
      return "zoom";
    case RowSource::kEdge:
      return "edge";
  }
  return "?";
}

std::vector<GridAddition> RefineGrid(const AtlasCoverage& coverage,
                                     const std::vector<ScanPoint>& grid,
                                     const ScanAnalysis& analysis, int64_t baseline_memory,
                                     double cliff_factor, const RefineLimits& limits) {
  std::set<int64_t> taken;
  for (const ScanPoint& p : grid) taken.insert(p.budget);
  std::vector<GridAddition> out;
  // Adds a group of budgets whole, or none of it once the limit is reached.
  auto add_group = [&](std::vector<GridAddition> group) {
    std::vector<GridAddition> fresh;
    for (GridAddition& a : group) {
      int64_t b = a.ratio ? BudgetChoice::OfRatio(*a.ratio, baseline_memory) : a.budget;
      if (b <= 0 || taken.count(b)) continue;
      a.budget = b;
      fresh.push_back(std::move(a));
    }
    if (out.size() + fresh.size() > limits.max_budgets) return;
    for (GridAddition& a : fresh) {
      taken.insert(a.budget);
      out.push_back(std::move(a));
    }
  };

  // Inversions of the atlas with no grid budget inside.
  for (const BudgetAtlas& s : coverage.sections) {
    const std::vector<AtlasInterval>& ivs = s.intervals;
    std::vector<Outcome> outcomes;
    for (const AtlasInterval& iv : ivs) outcomes.push_back(iv.behaviour.outcome);
    for (const auto& [i, j] : FindInversionStretches(outcomes)) {
      const int64_t first = ivs[i].lo, last = ivs[j].hi;
      bool seen = false;
      for (const ScanPoint& p : grid) seen |= first <= p.budget && p.budget <= last;
      if (seen) continue;
      const std::string where =
          fmt::format("the OOM budgets [{}, {}] the grid stepped over", first, last);
      std::vector<GridAddition> group;
      for (Ratio& r : ZoomGrid(first, last, baseline_memory))
        group.push_back({std::move(r), 0, RowSource::kZoomGrid, "zoom grid over " + where});
      if (group.empty()) {
        group.push_back({std::nullopt, first - 1, RowSource::kEdge, "last passing budget below " + where});
        group.push_back({std::nullopt, first, RowSource::kEdge, "first of " + where});
        if (last != first) group.push_back({std::nullopt, last, RowSource::kEdge, "last of " + where});
        group.push_back({std::nullopt, last + 1, RowSource::kEdge, "first passing budget above " + where});
      }
      add_group(std::move(group));
    }
  }

  // Cliffs of the atlas that no grid cliff brackets, largest first.
  std::vector<AtlasCliff> cliffs;
  for (const AtlasCliff& c : FindAtlasCliffs(coverage, cliff_factor)) {
    bool bracketed = false;
    for (const ScanCliff& g : analysis.cliffs)
      bracketed |= grid[g.lower].budget <= c.last_byte && c.first_byte <= grid[g.upper].budget;
    if (!bracketed) cliffs.push_back(c);
  }
  std::stable_sort(cliffs.begin(), cliffs.end(),
                   [](const AtlasCliff& a, const AtlasCliff& b) { return a.factor > b.factor; });
  if (cliffs.size() > limits.max_cliffs) cliffs.resize(limits.max_cliffs);
  std::sort(cliffs.begin(), cliffs.end(),
            [](const AtlasCliff& a, const AtlasCliff& b) { return a.last_byte < b.last_byte; });
  for (const AtlasCliff& c : cliffs) {
    std::string what = fmt::format("the cliff x{:.2f} (overhead {:.3f} to {:.3f}) between bytes {} and {}",
                                   c.factor, c.overhead_below, c.overhead_above, c.last_byte,
                                   c.first_byte);
    add_group({{std::nullopt, c.last_byte, RowSource::kEdge, "below " + what},
               {std::nullopt, c.first_byte, RowSource::kEdge, "above " + what}});
  }
  return out;
}

}  // namespace dtr
