#include "checker/sweep.h"

#include <map>
#include <mutex>
#include <string_view>

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
                               int jobs, const ProgressFn& progress, const GridJournal* journal) {
  std::vector<std::optional<RunResult>> results(specs.size());
  // The specs replayed here, one per point not finished yet (all of them
  // without a journal); `same_as[i]`: the spec whose result spec i takes.
  std::vector<size_t> todo;
  std::vector<size_t> same_as(specs.size());
  size_t known = 0;
  if (!journal) {
    for (size_t i = 0; i < specs.size(); ++i) todo.push_back(same_as[i] = i);
  } else {
    using Point = std::pair<std::string_view, int64_t>;  // heuristic, budget
    std::map<Point, const RunResult*> finished;
    for (const GridPointResult& p : journal->finished) finished.emplace(Point{p.heuristic, p.result.budget}, &p.result);
    std::map<Point, size_t> first;  // of the points replayed here
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!specs[i].overrides.empty()) throw Error("a journaled grid cannot have overrides");
      Point point{specs[i].heuristic->name, ConfigFor(specs[i], baseline).budget};
      same_as[i] = i;
      if (auto it = finished.find(point); it != finished.end()) {
        results[i] = *it->second;
        ++known;
      } else if (auto [at, fresh] = first.emplace(point, i); fresh) {
        todo.push_back(i);
      } else {
        same_as[i] = at->second;
      }
    }
  }
  if (progress && known > 0) progress(known, known + todo.size());
  std::mutex mu;  // serializes journal records
  auto record = [&](size_t t, const RunResult& r) {
    if (!journal || !journal->record) return;
    std::lock_guard<std::mutex> lock(mu);
    journal->record({std::string(specs[todo[t]].heuristic->name), r});
  };
  // The farm returns the results alone (what travels between MPI ranks);
  // every rank has the specs. A replay on another MPI rank is recorded here
  // when it arrives.
  RunTaskFarm<RunResult>(
      todo.size(), jobs,
      [&](size_t t) {
        RunResult r = Replay(trace, ConfigFor(specs[todo[t]], baseline));
        if (FarmCollectsHere()) record(t, r);
        return r;
      },
      [&](size_t t, RunResult&& r) {
        results[todo[t]] = std::move(r);
        return true;
      },
      progress ? FarmProgressFn([&](size_t done, size_t) { progress(known + done, known + todo.size()); })
               : FarmProgressFn(),
      [&](size_t t, const RunResult& r) { record(t, r); });
  std::vector<RunRecord> runs(specs.size());
  // Backwards, so that a result is copied to the specs that repeat its point
  // (same_as[i] < i) before it is moved to its own.
  for (size_t i = specs.size(); i-- > 0;) {
    runs[i].spec = specs[i];
    runs[i].result = same_as[i] == i ? std::move(*results[i]) : *results[same_as[i]];
    runs[i].overhead = Overhead(runs[i].result.clock, baseline.compute);
  }
  return runs;
}

}  // namespace dtr
