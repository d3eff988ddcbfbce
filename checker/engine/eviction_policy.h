// Policies choose evictions at an engine's computation points
// (checker/engine/engine.h); the replay loop (checker/engine/replay.h Drive) asks them.
// A heuristic (checker/engine/heuristic_policy.h) frees memory on demand; an
// eviction script evicts at fixed events and treats the budget as a hard
// limit; overrides replace chosen decisions of another policy.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "checker/engine/engine.h"
#include "checker/engine/run_result.h"

namespace dtr {

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // At every computation point, before the budget check: the evictions the
  // policy makes whatever the budget. False ends the run (failure() says why).
  virtual bool Prepare(Engine&) { return true; }
  // Whether the policy evicts when a computation does not fit (Choose), or
  // the run ends as an OOM there.
  virtual bool frees_on_demand() const { return true; }
  // REQUIRES: frees_on_demand(), the computation does not fit, the pool is
  // not empty. The storage to evict; with `detail`, also its score and terms
  // and the runner-up (the caller fills in where the decision is).
  virtual StorageId Choose(Engine& engine, DecisionPoint* detail) = 0;
  // At the end of a run that completed: false if the policy was not done
  // (failure() says why).
  virtual bool Finish(const Engine&) { return true; }
  // The score and terms the policy gives s now, if it scores storages.
  virtual std::optional<std::pair<double, ScoreTerms>> Explain(Engine&, StorageId) { return std::nullopt; }
  const std::optional<ScriptFailure>& failure() const { return failure_; }

 protected:
  std::optional<ScriptFailure> failure_;
};

// Evicts exactly a script's storages at their events. Without a fallback,
// a computation over the budget ends the run (an OOM with a script failure);
// with one, the fallback frees whatever is still missing (a scripted start,
// a heuristic rest).
class ScriptPolicy : public EvictionPolicy {
 public:
  // `entries` must outlive the policy.
  ScriptPolicy(const std::vector<ScriptedEviction>& entries, EvictionPolicy* fallback)
      : entries_(entries), fallback_(fallback) {}
  bool Prepare(Engine& engine) override;
  bool frees_on_demand() const override { return fallback_ != nullptr; }
  StorageId Choose(Engine& engine, DecisionPoint* detail) override { return fallback_->Choose(engine, detail); }
  std::optional<std::pair<double, ScoreTerms>> Explain(Engine& engine, StorageId s) override {
    return fallback_ ? fallback_->Explain(engine, s) : std::nullopt;
  }
  bool Finish(const Engine& engine) override;

 private:
  const std::vector<ScriptedEviction>& entries_;
  EvictionPolicy* fallback_;
  size_t next_ = 0;
};

// Replaces the inner policy's choice at given decision indices (sorted).
// The inner policy still decides first (its evaluations and random draws
// happen as without the override). Throws Error if the overriding storage
// is not in the pool then.
class OverridePolicy : public EvictionPolicy {
 public:
  OverridePolicy(EvictionPolicy& inner, std::vector<std::pair<int64_t, StorageId>> overrides)
      : inner_(inner), overrides_(std::move(overrides)) {}
  StorageId Choose(Engine& engine, DecisionPoint* detail) override;
  std::optional<std::pair<double, ScoreTerms>> Explain(Engine& engine, StorageId s) override {
    return inner_.Explain(engine, s);
  }

 private:
  EvictionPolicy& inner_;
  std::vector<std::pair<int64_t, StorageId>> overrides_;
  size_t next_ = 0;
};

}  // namespace dtr
