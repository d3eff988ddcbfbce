// A budget as a caller chooses it: a ratio of simrd's baseline peak memory or
// a number of bytes. Bytes() is where a chosen ratio becomes a budget
// against the baseline (int(baseline_memory * ratio) in doubles, as simrd
// computes it: BudgetForRatio); a run (RunSpec) holds its budget as this type
// and every command resolves its --ratio / --budget through it.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "checker/drivers/ratio_grid.h"

namespace dtr {

struct BudgetChoice {
  std::optional<Ratio> ratio;     // the budget is int(baseline_memory * ratio) ...
  std::optional<int64_t> budget;  // ... unless given in bytes

  // The budget in bytes. Throws Error when neither is set, when the budget is
  // negative, or when the ratio's budget does not fit in 64 bits.
  int64_t Bytes(int64_t baseline_memory) const;
  // The budget of `ratio`: BudgetChoice{ratio}.Bytes(baseline_memory).
  static int64_t OfRatio(const Ratio& ratio, int64_t baseline_memory);
};

// The budgets of the lowest and the highest ratio of a grid, the byte range
// an exact walk over the grid covers. Throws Error for an empty grid.
std::pair<int64_t, int64_t> GridBudgetRange(const std::vector<Ratio>& grid, int64_t baseline_memory);

}  // namespace dtr
