#include "checker/proofs/exhaustive_search.h"

#include <algorithm>
#include <bit>
#include <string>
#include <unordered_set>
#include <vector>

#include "checker/engine/engine.h"

namespace dtr {

namespace {

class Search {
 public:
  Search(const Trace& trace, const ExhaustiveOptions& options) : trace_(trace), options_(options) {}

  ExhaustiveResult Run() {
    ExhaustiveResult result;
    EngineOptions eo;
    eo.runtime = options_.eager ? RuntimeKind::kV2Eager : RuntimeKind::kV2;
    Engine start(trace_, eo);
    bool feasible = false;
    try {
      feasible = Visit(start);
      result.verdict = feasible ? SearchVerdict::kFeasible : SearchVerdict::kInfeasible;
    } catch (const GaveUp&) {
      result.verdict = SearchVerdict::kGaveUp;
    }
    if (feasible) result.script.entries = path_;
    result.states = states_;
    return result;
  }

 private:
  struct GaveUp {};

  // True if the run can be completed from `rt` (not yet advanced); on
  // success path_ holds the evictions made on the way.
  bool Visit(Engine& rt) {
    if (!rt.Advance()) return true;
    if (++states_ > options_.max_states) throw GaveUp{};
    std::string key;
    rt.AppendKey(key);
    if (dead_.count(key)) return false;
    std::vector<StorageId> evictable;
    int64_t evictable_bytes = 0;
    for (StorageId s = 0; s < static_cast<StorageId>(trace_.storages.size()); ++s)
      if (rt.Evictable(s)) {
        evictable.push_back(s);
        evictable_bytes += trace_.storages[s].size;
      }
    const int64_t request = rt.request();
    if (rt.memory() - evictable_bytes + request <= options_.budget) {
      if (static_cast<int32_t>(evictable.size()) > options_.max_evictable) throw GaveUp{};
      // Fewer evictions first: a script that evicts less is easier to read.
      std::vector<uint32_t> masks(size_t{1} << evictable.size());
      for (uint32_t m = 0; m < masks.size(); ++m) masks[m] = m;
      std::stable_sort(masks.begin(), masks.end(),
                       [](uint32_t a, uint32_t b) { return std::popcount(a) < std::popcount(b); });
      for (uint32_t mask : masks) {
        int64_t freed = 0;
        for (size_t i = 0; i < evictable.size(); ++i)
          if (mask >> i & 1) freed += trace_.storages[evictable[i]].size;
        if (rt.memory() - freed + request > options_.budget) continue;
        Engine next = rt;
        size_t path_size = path_.size();
        for (size_t i = 0; i < evictable.size(); ++i)
          if (mask >> i & 1) {
            next.Evict(evictable[i]);
            path_.push_back({next.event(), evictable[i]});
          }
        next.Compute();
        if (Visit(next)) return true;
        path_.resize(path_size);
      }
    }
    dead_.insert(std::move(key));
    return false;
  }

  const Trace& trace_;
  const ExhaustiveOptions& options_;
  int64_t states_ = 0;
  std::unordered_set<std::string> dead_;
  std::vector<ScriptedEviction> path_;
};

}  // namespace

ExhaustiveResult SearchAllSchedules(const Trace& trace, const ExhaustiveOptions& options) {
  return Search(trace, options).Run();
}

int64_t SmallestFeasibleBudget(const Trace& trace, bool eager, int64_t max_states) {
  ExhaustiveOptions o;
  o.eager = eager;
  o.max_states = max_states;
  int64_t hi = 0;
  for (const Storage& s : trace.storages) hi += s.size;
  for (const Operator& op : trace.ops) hi += op.total_size;  // room for every computation's copy
  o.budget = hi;
  ExhaustiveResult top = SearchAllSchedules(trace, o);
  if (top.verdict != SearchVerdict::kFeasible) return -1;
  int64_t lo = -1;  // infeasible (a negative budget fits nothing)
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    o.budget = mid;
    ExhaustiveResult r = SearchAllSchedules(trace, o);
    if (r.verdict == SearchVerdict::kGaveUp) return -1;
    (r.verdict == SearchVerdict::kFeasible ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace dtr
