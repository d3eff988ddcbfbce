// The deterministic replay of a trace under a memory budget, reproducing
// simrd's runtimes (runtime/v1.py, runtime/v2.py) bit for bit: one loop
// (Drive) over the engine's computation points (checker/engine/engine.h), asking a
// policy (checker/engine/eviction_policy.h) for evictions.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "checker/engine/engine.h"
#include "checker/engine/eviction_policy.h"
#include "checker/engine/heuristic.h"
#include "checker/engine/run_result.h"
#include "model/trace.h"

namespace dtr {

struct ReplayConfig {
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  const HeuristicSpec* heuristic = nullptr;  // nullptr: no heuristic (only valid with an infinite budget)
  int64_t budget = kInfiniteBudget;
  // Thrash when remat_compute > remat_limit (simrd compares an int with a float).
  double remat_limit = std::numeric_limits<double>::infinity();
  uint64_t seed = 0;  // RandomStorage / AbRandom only
  int64_t work_limit = std::numeric_limits<int64_t>::max();  // EngineOptions::work_limit
  ReplayObserver* observer = nullptr;
  // Sees every computation (OnComputation, which may stop the run) and
  // nothing else, so the decisions take the unobserved path: a progress
  // display, a CPU limit. Not a part of what the run is (RunMany's copies).
  ReplayObserver* watcher = nullptr;
  // Decision index -> storage to evict instead of the heuristic's choice
  // (sorted by index). The storage must be in the pool at that decision.
  std::vector<std::pair<int64_t, StorageId>> overrides;
  // With a script, no heuristic runs: exactly the scripted storages are
  // evicted (eager evictions of the runtime still happen), and the run fails
  // as soon as an allocation does not fit the budget. With a script and a
  // heuristic, the scripted evictions happen first and the heuristic frees
  // whatever is still missing (a scripted start, a heuristic rest).
  const std::vector<ScriptedEviction>* script = nullptr;
};

// The engine options a configuration needs (regions and equivalence classes
// only where its heuristic reads them). Throws Error if the heuristic needs a
// feature the runtime lacks, or a finite budget has neither a heuristic nor
// a script.
EngineOptions EngineOptionsFor(const ReplayConfig& config);

// The policy a configuration describes: its script, heuristic and overrides.
class ConfiguredPolicy : public EvictionPolicy {
 public:
  explicit ConfiguredPolicy(const ReplayConfig& config);
  bool Prepare(Engine& engine) override;
  bool frees_on_demand() const override { return top_->frees_on_demand(); }
  StorageId Choose(Engine& engine, DecisionPoint* detail) override { return top_->Choose(engine, detail); }
  bool Finish(const Engine& engine) override;
  std::optional<std::pair<double, ScoreTerms>> Explain(Engine& engine, StorageId s) override {
    return top_->Explain(engine, s);
  }

 private:
  std::unique_ptr<EvictionPolicy> heuristic_, overrides_, script_;
  EvictionPolicy* top_ = nullptr;
};

// The replay loop: from wherever `engine` stands, runs to the end of the
// program, an OOM, a thrash, a policy failure or an observer's stop. At
// each computation point the policy prepares; if the computation does not
// fit, the policy evicts one storage at a time (each a decision, reported to
// `observer`) until it fits or the pool is empty (OOM).
// The engine is left where the run ended (at an OOM or a stop: that
// computation point), so it can be inspected or driven on.
// `at_point`, if given, sees the engine at each computation point before
// the policy prepares: copies of the engine and policy taken there and
// driven on end as the run does.
class PointHook {
 public:
  virtual ~PointHook() = default;
  virtual void AtPoint(const Engine& engine) = 0;
};
RunResult Drive(Engine& engine, EvictionPolicy& policy, ReplayObserver* observer,
                PointHook* at_point = nullptr);

// Throws Error if the configuration is invalid, or if the run reaches a
// state where simrd itself stops with an assertion.
RunResult Replay(const Trace& trace, const ReplayConfig& config);

// A replay and the engine where it ended. With `stop_before_decision`, the
// run stops (Outcome::kStopped) when that decision is due: the engine is at
// its computation point, over budget, with the earlier decisions made.
struct ReplayState {
  RunResult result;
  Engine engine;
};
ReplayState ReplayWithState(const Trace& trace, const ReplayConfig& config,
                            std::optional<int64_t> stop_before_decision = std::nullopt);

// simrd's baseline: RuntimeV1 with an infinite budget.
struct Baseline {
  int64_t memory = 0;   // peak memory
  int64_t compute = 0;  // model compute
  int64_t const_memory = 0;
  int64_t bottleneck_memory = 0;
};
Baseline ComputeBaseline(const Trace& trace);

// int(baseline_memory * ratio), in doubles, as simrd computes it. Throws
// Error if the product does not fit in 64 bits.
int64_t BudgetForRatio(int64_t baseline_memory, double ratio);
// baseline_compute * (overhead_limit - 1), as a double.
double RematLimit(int64_t baseline_compute, double overhead_limit);
// clock / baseline_compute, correctly rounded.
double Overhead(int64_t clock, int64_t baseline_compute);

}  // namespace dtr
