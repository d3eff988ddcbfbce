// A run's decisions, as little of each as comparing runs needs.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "checker/engine/run_result.h"
#include "model/trace.h"

namespace dtr {

// What pairing decisions across runs reads of each decision, 16 bytes: a
// run of millions of decisions keeps its trail, not its decision log. (The
// request is the tensor's operator's output size, so the tensor decides it.)
struct TrailStep {
  int32_t program_step = 0;
  TensorId tensor = 0;
  int32_t remat_depth = 0;
  StorageId chosen = -1;
};
using DecisionTrail = std::deque<TrailStep>;

inline TrailStep StepOf(const DecisionPoint& d) {
  return {d.program_step, d.tensor, d.remat_depth, d.chosen};
}

// A run's trail and the event of each decision (the computations before
// it), as RunMany keeps them (RunRecord::trail). Two runs that differ in
// budget alone make their first k decisions alike exactly when those
// decisions have the same events and choices: the same decisions at the same
// events leave the same state, so the next decision point, if at the same
// event, is the same point.
struct RunTrail {
  DecisionTrail steps;
  std::vector<int64_t> events;
};

}  // namespace dtr
