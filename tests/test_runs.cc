#include "tests/test_runs.h"

#include "checker/drivers/ratio_grid.h"
#include "checker/engine/heuristic.h"
#include "model/trace_parser.h"
#include "tests/test_paths.h"

namespace dtr::testing {

RunSpec SpecAtBudget(int64_t budget, const char* heuristic) {
  RunSpec s;
  s.heuristic = &FindHeuristic(heuristic);
  s.budget = budget;
  return s;
}

RunSpec SpecAtRatio(const char* ratio, const char* heuristic) {
  RunSpec s;
  s.heuristic = &FindHeuristic(heuristic);
  s.ratio = ParseRatio(ratio);
  return s;
}

StorageId StorageOf(const Trace& trace, const std::string& tensor) {
  return trace.tensor_named(tensor).storage;
}

ReplayConfig LoadedTrace::ConfigAt(const char* ratio, const char* heuristic) const {
  return ConfigFor(SpecAtRatio(ratio, heuristic), baseline);
}

LoadedTrace LoadWithBaseline(const std::string& name) {
  LoadedTrace t;
  t.trace = LoadTrace(TracePath(name));
  t.baseline = ComputeBaseline(t.trace);
  return t;
}

}  // namespace dtr::testing
