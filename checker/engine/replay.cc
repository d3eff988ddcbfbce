#include "checker/engine/replay.h"

#include <fmt/core.h>

#include <cmath>

#include "checker/engine/exact_divide.h"
#include "checker/engine/heuristic_policy.h"
#include "model/error.h"

namespace dtr {

EngineOptions EngineOptionsFor(const ReplayConfig& config) {
  EngineOptions o;
  o.runtime = config.runtime;
  o.budget = config.budget;
  o.remat_limit = config.remat_limit;
  o.work_limit = config.work_limit;
  o.observer = config.observer;
  o.watcher = config.watcher;
  if (config.heuristic) {
    HeuristicPolicy::CheckSupported(*config.heuristic, config.runtime);
    o.regions = (config.heuristic->features & kFeatureRegions) && OptimizedRuntime(config.runtime);
    o.eq_classes = (config.heuristic->features & kFeatureEqClass) && OptimizedRuntime(config.runtime);
  } else if (config.budget != kInfiniteBudget && !config.script) {
    throw Error("a finite budget needs a heuristic or an eviction script");
  }
  return o;
}

ConfiguredPolicy::ConfiguredPolicy(const ReplayConfig& config) {
  if (config.heuristic) {
    heuristic_ = std::make_unique<HeuristicPolicy>(*config.heuristic, config.seed);
    top_ = heuristic_.get();
    if (!config.overrides.empty()) {
      overrides_ = std::make_unique<OverridePolicy>(*top_, config.overrides);
      top_ = overrides_.get();
    }
  }
  if (config.script) {
    script_ = std::make_unique<ScriptPolicy>(*config.script, top_);
    top_ = script_.get();
  }
  if (!top_) {  // an infinite budget without a heuristic: nothing ever needs freeing
    static const std::vector<ScriptedEviction> kNoEntries;
    script_ = std::make_unique<ScriptPolicy>(kNoEntries, nullptr);
    top_ = script_.get();
  }
}

bool ConfiguredPolicy::Prepare(Engine& engine) {
  if (top_->Prepare(engine)) return true;
  failure_ = top_->failure();
  return false;
}

bool ConfiguredPolicy::Finish(const Engine& engine) {
  if (top_->Finish(engine)) return true;
  failure_ = top_->failure();
  return false;
}

RunResult Drive(Engine& engine, EvictionPolicy& policy, ReplayObserver* observer, PointHook* at_point) {
  Outcome outcome = Outcome::kPass;
  std::optional<ScriptFailure> failure;
  const bool frees = policy.frees_on_demand();
  for (;;) {
    if (!engine.Advance()) {
      outcome = engine.thrashed() ? Outcome::kThrash : engine.stop_requested() ? Outcome::kStopped : Outcome::kPass;
      break;
    }
    if (at_point) at_point->AtPoint(engine);
    if (!policy.Prepare(engine)) {
      failure = policy.failure();
      outcome = Outcome::kInvalidScript;
      break;
    }
    const int64_t need = engine.request();
    if (!frees) {
      if (!engine.Fits(need)) {
        engine.CaptureOom();
        failure = ScriptFailure{
            -1, engine.event(),
            fmt::format("computing {} needs {} bytes with {} in use, over the budget of {}",
                        engine.trace().tensors[engine.tensor()].name, need, engine.memory(), engine.budget())};
        outcome = Outcome::kOom;
        break;
      }
    } else {
      bool stop = false, oom = false;
      while (!engine.Fits(need)) {
        if (engine.pool_size() == 0) {
          oom = true;
          break;
        }
        if (observer) {
          DecisionPoint d;
          d.index = engine.decisions();
          d.event = engine.event();
          d.clock = engine.clock();
          d.program_step = engine.program_step();
          d.remat_depth = static_cast<int32_t>(engine.frames().size()) - 1;
          d.tensor = engine.tensor();
          d.request = need;
          d.memory_usage = engine.memory();
          d.pool_size = engine.pool_size();
          if (observer->OnDecisionDue(d) == Flow::kStop) {
            stop = true;
            break;
          }
          d.chosen = policy.Choose(engine, observer->WantsScores() ? &d : nullptr);
          const Flow flow = observer->OnDecision(d);
          engine.Evict(d.chosen);
          engine.CountDecision();
          if (flow == Flow::kStop) {
            stop = true;
            break;
          }
        } else {
          engine.Evict(policy.Choose(engine, nullptr));
          engine.CountDecision();
        }
      }
      if (oom) {
        engine.CaptureOom();
        outcome = Outcome::kOom;
        break;
      }
      if (stop) {
        outcome = Outcome::kStopped;
        break;
      }
    }
    engine.Compute();
  }
  if (outcome == Outcome::kPass && !policy.Finish(engine)) {
    outcome = Outcome::kInvalidScript;
    failure = policy.failure();
  }
  RunResult r = engine.Result(outcome);
  r.script_failure = std::move(failure);
  return r;
}

RunResult Replay(const Trace& trace, const ReplayConfig& config) {
  Engine engine(trace, EngineOptionsFor(config));
  ConfiguredPolicy policy(config);
  return Drive(engine, policy, config.observer);
}

namespace {

// Stops before decision `index`; passes every event on to `next`.
class StopBeforeDecision : public ReplayObserver {
 public:
  StopBeforeDecision(int64_t index, ReplayObserver* next) : index_(index), next_(next) {}
  Flow OnDecisionDue(const DecisionPoint& d) override {
    if (d.index == index_) return Flow::kStop;
    return next_ ? next_->OnDecisionDue(d) : Flow::kContinue;
  }
  Flow OnDecision(const DecisionPoint& d) override {
    return next_ ? next_->OnDecision(d) : Flow::kContinue;
  }
  bool WantsScores() const override { return next_ && next_->WantsScores(); }
  Flow OnEagerEviction(const EagerEviction& e) override {
    return next_ ? next_->OnEagerEviction(e) : Flow::kContinue;
  }
  Flow OnComputation(const Computation& c) override {
    return next_ ? next_->OnComputation(c) : Flow::kContinue;
  }

 private:
  int64_t index_;
  ReplayObserver* next_;
};

}  // namespace

ReplayState ReplayWithState(const Trace& trace, const ReplayConfig& config,
                            std::optional<int64_t> stop_before_decision) {
  ReplayState state{RunResult{}, Engine(trace, EngineOptionsFor(config))};
  ConfiguredPolicy policy(config);
  if (stop_before_decision) {
    StopBeforeDecision stop(*stop_before_decision, config.observer);
    state.engine.set_observer(&stop);
    state.result = Drive(state.engine, policy, &stop);
  } else {
    state.result = Drive(state.engine, policy, config.observer);
  }
  state.engine.set_observer(nullptr);  // both may be gone before the engine
  state.engine.set_watcher(nullptr);
  return state;
}

Baseline ComputeBaseline(const Trace& trace) {
  ReplayConfig config;
  config.runtime = RuntimeKind::kV1;
  RunResult r = Replay(trace, config);
  return {r.max_memory, r.model_compute, r.const_memory, r.bottleneck_memory};
}

int64_t BudgetForRatio(int64_t baseline_memory, double ratio) {
  double budget = static_cast<double>(baseline_memory) * ratio;
  if (!(budget >= -9223372036854775808.0 && budget < 9223372036854775808.0))
    throw Error(fmt::format("ratio {} of baseline memory {} is not a 64-bit budget", ratio, baseline_memory));
  return static_cast<int64_t>(budget);
}

double RematLimit(int64_t baseline_compute, double overhead_limit) {
  return static_cast<double>(baseline_compute) * (overhead_limit - 1.0);
}

double Overhead(int64_t clock, int64_t baseline_compute) {
  bool negative = clock < 0;
  double q = ExactDivide(static_cast<uint64_t>(negative ? -clock : clock), static_cast<uint64_t>(baseline_compute));
  return negative ? -q : q;
}

}  // namespace dtr
