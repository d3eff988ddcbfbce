#include "checker/sweep.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

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
  std::vector<RunRecord> out(specs.size());
  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min<int>(jobs, static_cast<int>(std::max<size_t>(1, specs.size())));
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mu;
  std::exception_ptr failure;
  auto worker = [&] {
    for (;;) {
      size_t i = next++;
      if (i >= specs.size()) return;
      try {
        out[i] = RunOne(trace, baseline, specs[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        next = specs.size();
        return;
      }
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (progress) progress(done, specs.size());
    }
  };
  std::vector<std::thread> pool;
  for (int j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace dtr
