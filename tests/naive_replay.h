// A plain, obviously-faithful port of simrd's runtimes for tests: objects with
// pointer lists and std::set, recursion, linear pool scans, storage compute
// recomputed from its tensors, regions as sets. Slow, and kept that way; the
// optimized engine (checker/replay.cc) is checked against it.
#pragma once

#include <vector>

#include "checker/replay.h"
#include "model/trace.h"

namespace dtr::testing {

struct NaiveRun {
  RunResult result;
  std::vector<StorageId> decisions;  // storage chosen at each heuristic decision
};

NaiveRun NaiveReplay(const Trace& trace, const ReplayConfig& config);

}  // namespace dtr::testing
