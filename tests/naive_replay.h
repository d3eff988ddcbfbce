// A plain, obviously-faithful port of simrd's runtimes for tests: objects with
// pointer lists and std::set, recursion, linear pool scans, storage compute
// recomputed from its tensors, regions as sets. Slow, and kept that way; the
// optimized engine (checker/engine/replay.cc) is checked against it.
#pragma once

#include <vector>

#include "checker/engine/replay.h"
#include "model/trace.h"

namespace dtr::testing {

struct NaiveRun {
  RunResult result;
  std::vector<StorageId> decisions;  // storage chosen at each heuristic decision
  // For heuristics scored on simrd's incremental regions: evaluations, and
  // how many of them differ from the same score on regions rebuilt from scratch.
  int64_t region_evaluations = 0;
  int64_t region_stale_evaluations = 0;
};

// The one place where dtrcheck knowingly departs from simrd: simrd's
// Region.absorb asserts that an evicted storage is on the frontier of each
// neighbour's region, and rare states violate this for the region of a
// pinned storage, which simrd never reads again. simrd stops there; the
// optimized replay keeps no regions for pinned storages and goes on. The
// plain replay throws Error with this message in that state.
inline constexpr const char* kPinnedAbsorbAssertion =
    "naive: simrd asserts in Region.absorb on the region of a pinned storage";

NaiveRun NaiveReplay(const Trace& trace, const ReplayConfig& config);

}  // namespace dtr::testing
