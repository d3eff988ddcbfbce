#include "checker/sweep.h"

#include "checker/parallel.h"
#include "model/error.h"

namespace dtr {

ReplayConfig ConfigFor(const RunSpec& spec, const Baseline& baseline) {
  ReplayConfig c;
  c.runtime = spec.runtime;
  c.heuristic = spec.heuristic;
  if (spec.budget) {
    c.budget = *spec.budget;
  } else if (spec.ratio) {
    c.budget = BudgetForRatio(baseline.memory, spec.ratio->value);
  } else {
    throw Error("a run needs a ratio or a budget");
  }
  if (c.budget < 0) throw Error("the budget must not be negative");
  if (spec.overhead_limit) c.remat_limit = RematLimit(baseline.compute, *spec.overhead_limit);
  c.seed = spec.seed;
  c.overrides = spec.overrides;
  return c;
}

RunRecord RunOne(const Trace& trace, const Baseline& baseline, const RunSpec& spec) {
  RunRecord r;
  r.spec = spec;
  r.result = Replay(trace, ConfigFor(spec, baseline));
  r.overhead = Overhead(r.result.clock, baseline.compute);
  return r;
}

std::vector<RunRecord> RunMany(const Trace& trace, const Baseline& baseline, const std::vector<RunSpec>& specs,
                               int jobs, const ProgressFn& progress) {
  return ParallelMap<RunRecord>(
      specs.size(), jobs, [&](size_t i) { return RunOne(trace, baseline, specs[i]); }, progress);
}

}  // namespace dtr
