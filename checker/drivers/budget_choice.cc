#include "checker/drivers/budget_choice.h"

#include <algorithm>

#include "checker/engine/replay.h"
#include "model/error.h"

namespace dtr {

int64_t BudgetChoice::Bytes(int64_t baseline_memory) const {
  int64_t bytes = 0;
  if (budget)
    bytes = *budget;
  else if (ratio)
    bytes = BudgetForRatio(baseline_memory, ratio->value);
  else
    throw Error("a run needs a ratio or a budget");
  if (bytes < 0) throw Error("the budget must not be negative");
  return bytes;
}

int64_t BudgetChoice::OfRatio(const Ratio& ratio, int64_t baseline_memory) {
  return BudgetChoice{.ratio = ratio, .budget = std::nullopt}.Bytes(baseline_memory);
}

std::pair<int64_t, int64_t> GridBudgetRange(const std::vector<Ratio>& grid, int64_t baseline_memory) {
  if (grid.empty()) throw Error("a grid needs at least one ratio");
  auto [lo, hi] = std::minmax_element(grid.begin(), grid.end(),
                                      [](const Ratio& a, const Ratio& b) { return a.value < b.value; });
  return {BudgetChoice::OfRatio(*lo, baseline_memory), BudgetChoice::OfRatio(*hi, baseline_memory)};
}

}  // namespace dtr
