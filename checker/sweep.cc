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
  // The farm returns the results alone (what travels between MPI ranks);
  // every rank has the specs.
  std::vector<RunResult> results = ParallelMap<RunResult>(
      specs.size(), jobs, [&](size_t i) { return Replay(trace, ConfigFor(specs[i], baseline)); }, progress);
  std::vector<RunRecord> runs(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    runs[i].spec = specs[i];
    runs[i].result = std::move(results[i]);
    runs[i].overhead = Overhead(runs[i].result.clock, baseline.compute);
  }
  return runs;
}

}  // namespace dtr
