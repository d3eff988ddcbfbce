// Exhaustive search over every eviction script: at every computation point,
// every subset of the evictable storages may be evicted. Exact, exponential:
// for tiny traces (about ten storages), where it is the ground truth against
// which the bounds, the Z3 encodings and the verdicts are tested.
#pragma once

#include <cstdint>

#include "checker/proofs/eviction_script.h"
#include "model/trace.h"

namespace dtr {

struct ExhaustiveOptions {
  int64_t budget = 0;
  bool eager = true;  // RuntimeV2EagerOptimized's eager evictions (false: RuntimeV2Optimized)
  int64_t max_states = 2'000'000;  // computation points visited before giving up
  int32_t max_evictable = 14;      // give up at a point with more evictable storages than this
};

enum class SearchVerdict {
  kFeasible,    // `script` passes at the budget (the engine agrees; tests check it)
  kInfeasible,  // every choice was tried: no script passes
  kGaveUp,      // a limit was hit
};

struct ExhaustiveResult {
  SearchVerdict verdict = SearchVerdict::kGaveUp;
  EvictionScript script;
  int64_t states = 0;
};

ExhaustiveResult SearchAllSchedules(const Trace& trace, const ExhaustiveOptions& options);

// The smallest budget at which some script passes, by bisection over
// SearchAllSchedules (feasibility is monotone in the budget: a script that
// passes at B passes at every B' > B). -1 if a search gave up.
int64_t SmallestFeasibleBudget(const Trace& trace, bool eager = true,
                               int64_t max_states = 2'000'000);

}  // namespace dtr
