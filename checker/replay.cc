// The replay engine: a port of simrd's RuntimeV1 and RuntimeV2 family.
//
// State invariants (as in simrd):
//  - A storage is in the eviction pool iff it is material and holds no lock
//    (ref_int == 0); pinned storages hold one lock forever. The pool keeps the
//    order in which storages last became evictable.
//  - A tensor is defined only while its storage is material; evicting a
//    storage undefines all its tensors (aliases included).
//  - Children, storage tensor lists and (RuntimeV1) parents grow and shrink
//    exactly as simrd's lists do, so that every traversal sees what simrd sees,
//    including outputs of the operator being computed, which are created
//    (immaterial) before their parents are materialized.
//  - With an optimizing runtime and a heuristic that reads them, each material
//    storage carries two incrementally maintained evicted regions and, once
//    evicted, a union-find equivalence class. Their values are simrd's
//    incremental ones, stale storage compute included; we never recompute them
//    from scratch where simrd does not.
#include "checker/replay.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_set>

#include "checker/exact_divide.h"
#include "model/error.h"

namespace dtr {

std::string_view RuntimeName(RuntimeKind kind) {
  switch (kind) {
    case RuntimeKind::kV1: return "RuntimeV1";
    case RuntimeKind::kV2: return "RuntimeV2";
    case RuntimeKind::kV2Eager: return "RuntimeV2Eager";
    case RuntimeKind::kV2Optimized: return "RuntimeV2Optimized";
    case RuntimeKind::kV2EagerOptimized: return "RuntimeV2EagerOptimized";
  }
  return "?";
}

std::vector<std::string_view> RuntimeNames() {
  return {"RuntimeV1", "RuntimeV2", "RuntimeV2Eager", "RuntimeV2Optimized", "RuntimeV2EagerOptimized"};
}

RuntimeKind ParseRuntime(std::string_view name) {
  for (RuntimeKind k : {RuntimeKind::kV1, RuntimeKind::kV2, RuntimeKind::kV2Eager, RuntimeKind::kV2Optimized,
                        RuntimeKind::kV2EagerOptimized})
    if (RuntimeName(k) == name) return k;
  throw Error(fmt::format(
      "unknown runtime '{}' (known: RuntimeV1, RuntimeV2, RuntimeV2Eager, RuntimeV2Optimized, "
      "RuntimeV2EagerOptimized)",
      name));
}

std::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "pass";
    case Outcome::kOom: return "oom";
    case Outcome::kThrash: return "thrash";
    case Outcome::kInvalidScript: return "invalid-script";
  }
  return "?";
}

int64_t BudgetForRatio(int64_t baseline_memory, double ratio) {
  return static_cast<int64_t>(static_cast<double>(baseline_memory) * ratio);
}

double RematLimit(int64_t baseline_compute, double overhead_limit) {
  return static_cast<double>(baseline_compute) * (overhead_limit - 1.0);
}

double Overhead(int64_t clock, int64_t baseline_compute) {
  bool negative = clock < 0;
  double q = ExactDivide(static_cast<uint64_t>(negative ? -clock : clock), static_cast<uint64_t>(baseline_compute));
  return negative ? -q : q;
}

namespace {

constexpr int64_t kNever = INT64_MIN;  // simrd's -math.inf last access time

struct OomSignal {};
struct ThrashSignal {};
struct ScriptSignal {};

struct Region {
  std::vector<StorageId> interior;  // a set: no duplicates, any order
  std::vector<StorageId> frontier;  // a set: no duplicates, any order
  int64_t compute = 0;
  void Clear() {
    interior.clear();
    frontier.clear();
    compute = 0;
  }
};

class Engine {
 public:
  Engine(const Trace& trace, const ReplayConfig& config);
  RunResult Run();

 private:
  bool v1() const { return runtime_ == RuntimeKind::kV1; }
  bool eager() const {
    return runtime_ == RuntimeKind::kV2Eager || runtime_ == RuntimeKind::kV2EagerOptimized;
  }
  StorageId storage(TensorId t) const { return trace_.tensors[t].storage; }

  // The budget comparison `memory + need > budget`, recording which budgets
  // give the same answer.
  bool OverBudget(int64_t need) {
    int64_t total = memory_ + need;
    if (total > budget_) {
      budget_hi_ = std::min(budget_hi_, total - 1);
      return true;
    }
    budget_lo_ = std::max(budget_lo_, total);
    return false;
  }

  void ComputeOp(OpId op);
  void Get(TensorId t);
  void Release(TensorId t);
  void Pin(TensorId t);
  void Materialize(TensorId t, bool remat);
  void ComputeTensor(TensorId t, bool remat, size_t remat_siblings_at);
  void Free(int64_t size);
  void Evict(StorageId s, bool by_heuristic);
  void Lock(StorageId s);
  void Unlock(StorageId s);
  void MakeEvictable(StorageId s);
  void MakeUnevictable(StorageId s);
  void TryBanish(StorageId s);
  void Bottleneck(TensorId t);
  [[noreturn]] void SimrdAssertion(const std::string& what) const;

  StorageId Choose();
  StorageId ChooseObserved(const DecisionPoint& where);
  double Score(StorageId s);
  ScoreTerms Terms(StorageId s);
  void ApplyScript();
  int64_t EqClassCompute(StorageId s);
  void Rebuild(Region& r, StorageId base, bool reverse);
  // Calls f(n) for each storage n != s holding a visible parent or child of
  // one of s's tensors (simrd: Storage.evicted_neighbors before its filter),
  // possibly more than once. RuntimeV2 family only.
  template <class F>
  void ForEachNeighbour(StorageId s, F&& f) {
    for (const StorageAdjacency* adj : {&trace_.storage_parents, &trace_.storage_children})
      for (const StorageEdge* e = adj->begin(s); e != adj->end(s) && e->key < tensor_count_; ++e) f(e->storage);
  }
  void Absorb(Region& r, StorageId fs, bool reverse);
  int32_t NewNode(int64_t value);
  int32_t Find(int32_t node);
  void Merge(int32_t a, int32_t b);
  void CaptureOom();

  const Trace& trace_;
  const RuntimeKind runtime_;
  const HeuristicSpec* heuristic_;
  const int64_t budget_;
  const double remat_limit_;
  const bool maintain_regions_;
  const bool maintain_eq_;
  std::mt19937_64 rng_;
  ReplayObserver* const observer_;
  const std::vector<std::pair<int64_t, StorageId>> overrides_;
  const std::vector<ScriptedEviction>* const script_;
  size_t next_override_ = 0;
  size_t next_script_ = 0;
  int64_t events_ = 0;
  int64_t decisions_ = 0;

  RunResult result_;
  int64_t memory_ = 0;
  int64_t budget_lo_ = 0, budget_hi_ = kInfiniteBudget;
  int32_t step_ = 0;
  TensorId tensor_count_ = 0;

  // Per tensor.
  std::vector<uint8_t> defined_;
  std::vector<int32_t> tensor_ref_;
  // RuntimeV1 only: simrd's Tensor.children and Tensor.parents, which it edits
  // while banishing. The V2 family walks Trace::storage_children/parents.
  std::vector<std::vector<TensorId>> children_;
  std::vector<std::vector<TensorId>> parents_;

  // Per storage.
  std::vector<uint8_t> material_, pinned_, banished_;
  std::vector<int32_t> ref_int_, ref_ext_;
  std::vector<int64_t> compute_, last_access_;
  std::vector<std::vector<TensorId>> storage_tensors_;
  std::vector<int32_t> pool_pos_;
  std::vector<Region> fwd_, rev_;
  std::vector<int32_t> ecn_;
  std::vector<std::unordered_set<TensorId>> evicted_dependents_;  // RuntimeV1

  // The pool: slots in insertion order, -1 for removed entries.
  std::vector<StorageId> pool_;
  int32_t pool_live_ = 0;

  // Union-find nodes of the equivalence classes.
  std::vector<int32_t> node_parent_;
  std::vector<int64_t> node_value_;

  // Scratch.
  std::vector<TensorId> frames_;  // pending materializations, outermost first
  std::vector<TensorId> scratch_;
  std::vector<StorageId> dfs_, merge_tmp_, diff_, affected_, affected_rev_, remat_storages_;
  std::vector<uint32_t> mark_a_, mark_b_;
  uint32_t stamp_ = 0;
  Region unopt_fwd_, unopt_rev_;
};

Engine::Engine(const Trace& trace, const ReplayConfig& config)
    : trace_(trace),
      runtime_(config.runtime),
      heuristic_(config.heuristic),
      budget_(config.budget),
      remat_limit_(config.remat_limit),
      maintain_regions_(heuristic_ && (heuristic_->features & kFeatureRegions) &&
                        (config.runtime == RuntimeKind::kV2Optimized ||
                         config.runtime == RuntimeKind::kV2EagerOptimized)),
      maintain_eq_(heuristic_ && (heuristic_->features & kFeatureEqClass) &&
                   (config.runtime == RuntimeKind::kV2Optimized ||
                    config.runtime == RuntimeKind::kV2EagerOptimized)),
      rng_(config.seed),
      observer_(config.observer),
      overrides_(config.overrides),
      script_(config.script) {
  if (heuristic_) {
    unsigned supported = kFeatureLastAccess;
    if (runtime_ == RuntimeKind::kV2Optimized || runtime_ == RuntimeKind::kV2EagerOptimized)
      supported |= kFeatureRegions | kFeatureEqClass;
    unsigned missing = heuristic_->features & ~supported;
    if (missing)
      throw Error(fmt::format("heuristic {} needs {}, which {} does not maintain (use RuntimeV2Optimized or "
                              "RuntimeV2EagerOptimized)",
                              heuristic_->name, (missing & kFeatureRegions) ? "evicted regions" : "equivalence classes",
                              RuntimeName(runtime_)));
  } else if (budget_ != kInfiniteBudget && !script_) {
    throw Error("a finite budget needs a heuristic or an eviction script");
  }
  size_t nt = trace.tensors.size(), ns = trace.storages.size();
  defined_.assign(nt, 0);
  tensor_ref_.assign(nt, 0);
  if (v1()) {
    children_.resize(nt);
    parents_.resize(nt);
  }
  material_.assign(ns, 0);
  pinned_.assign(ns, 0);
  ref_int_.assign(ns, 0);
  ref_ext_.assign(ns, 0);
  compute_.assign(ns, 0);
  last_access_.assign(ns, kNever);
  storage_tensors_.resize(ns);
  pool_pos_.assign(ns, -1);
  if (maintain_regions_) {
    fwd_.resize(ns);
    rev_.resize(ns);
  }
  if (maintain_eq_) ecn_.assign(ns, -1);
  if (v1()) {
    banished_.assign(ns, 0);
    evicted_dependents_.resize(ns);
  }
  mark_a_.assign(ns, 0);
  mark_b_.assign(ns, 0);
  result_.budget = budget_;
  result_.evict_count.assign(ns, 0);
  result_.heuristic_evict_count.assign(ns, 0);
}

void Engine::SimrdAssertion(const std::string& what) const {
  throw Error(fmt::format("{}:{}: {} (simrd stops with an assertion here)", trace_.source,
                          trace_.program[step_].line, what));
}

RunResult Engine::Run() {
  try {
    for (step_ = 0; step_ < static_cast<int32_t>(trace_.program.size()); ++step_) {
      const Step& st = trace_.program[step_];
      switch (st.kind) {
        case StepKind::kCompute: ComputeOp(st.target); break;
        case StepKind::kGet: Get(st.target); break;
        case StepKind::kRelease: Release(st.target); break;
        case StepKind::kPin:
          if (!defined_[st.target]) Materialize(st.target, true);
          Pin(st.target);
          break;
      }
    }
    result_.outcome = Outcome::kPass;
  } catch (const OomSignal&) {
    result_.outcome = Outcome::kOom;
  } catch (const ThrashSignal&) {
    result_.outcome = Outcome::kThrash;
  } catch (const ScriptSignal&) {
    result_.outcome = result_.script_failure->entry >= 0 ? Outcome::kInvalidScript : Outcome::kOom;
  }
  if (script_ && result_.outcome == Outcome::kPass && next_script_ < script_->size()) {
    result_.outcome = Outcome::kInvalidScript;
    result_.script_failure = ScriptFailure{static_cast<int64_t>(next_script_), (*script_)[next_script_].event,
                                           "the run ended before this event"};
  }
  result_.events = events_;
  for (size_t s = 0; s < result_.evict_count.size(); ++s) {
    result_.distinct_evicted += result_.evict_count[s] > 0;
    result_.distinct_heuristic_evicted += result_.heuristic_evict_count[s] > 0;
  }
  result_.budget_lo = budget_lo_;
  result_.budget_hi = budget_hi_;
  return std::move(result_);
}

// simrd: Runtime.compute() with Tensor.from_op().
void Engine::ComputeOp(OpId id) {
  const Operator& op = trace_.ops[id];
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    TensorId u = op.first_output + i;
    const Tensor& t = trace_.tensors[u];
    StorageId s = t.storage;
    bool fresh = !t.is_alias;
    storage_tensors_[s].push_back(u);
    ++ref_ext_[s];
    compute_[s] = t.storage_compute_after;
    tensor_ref_[u] = 1;
    if (op.is_constant) result_.const_memory += t.size;
    if (fresh) {
      if (maintain_eq_) ecn_[s] = NewNode(0);
    }
    if (v1()) {
      for (TensorId p : op.args)
        if (storage(p) != s) evicted_dependents_[storage(p)].insert(u);
      parents_[u] = op.args;
    }
  }
  tensor_count_ = op.first_output + op.num_outputs;
  if (v1())
    for (TensorId p : op.args)
      for (int32_t i = 0; i < op.num_outputs; ++i) children_[p].push_back(op.first_output + i);

  Materialize(op.first_output, false);

  for (int32_t i = 0; i < op.num_outputs; ++i) last_access_[storage(op.first_output + i)] = result_.clock;
}

void Engine::Get(TensorId t) {
  ++ref_ext_[storage(t)];
  ++tensor_ref_[t];
}

void Engine::Release(TensorId t) {
  StorageId s = storage(t);
  --ref_ext_[s];
  --tensor_ref_[t];
  if (v1()) {
    if (ref_ext_[s] == 0) TryBanish(s);
  } else if (eager() && ref_ext_[s] == 0 && material_[s] && !pinned_[s]) {
    Evict(s, false);
    if (observer_) observer_->OnEagerEviction({s, events_, result_.clock, step_});
  }
}

void Engine::Pin(TensorId t) {
  StorageId s = storage(t);
  if (!material_[s]) SimrdAssertion(fmt::format("cannot pin '{}', whose storage is evicted", trace_.tensors[t].name));
  if (pinned_[s]) return;
  Lock(s);
  pinned_[s] = 1;
}

void Engine::Lock(StorageId s) {
  if (v1() && banished_[s]) SimrdAssertion("cannot lock a banished storage");
  if (ref_int_[s] == 0) MakeUnevictable(s);
  ++ref_int_[s];
}

void Engine::Unlock(StorageId s) {
  if (--ref_int_[s] == 0) MakeEvictable(s);
}

void Engine::MakeEvictable(StorageId s) {
  if (pool_pos_[s] >= 0) return;
  pool_pos_[s] = static_cast<int32_t>(pool_.size());
  pool_.push_back(s);
  ++pool_live_;
}

void Engine::MakeUnevictable(StorageId s) {
  int32_t pos = pool_pos_[s];
  if (pos < 0) return;
  pool_[pos] = -1;
  pool_pos_[s] = -1;
  --pool_live_;
  size_t dead = pool_.size() - pool_live_;
  if (dead > 64 && dead > static_cast<size_t>(pool_live_)) {
    size_t w = 0;
    for (StorageId x : pool_)
      if (x >= 0) {
        pool_pos_[x] = static_cast<int32_t>(w);
        pool_[w++] = x;
      }
    pool_.resize(w);
  }
}

// simrd: _materialize().
void Engine::Materialize(TensorId t, bool remat) {
  frames_.push_back(t);
  const Operator& op = trace_.op_of(t);
  const std::vector<TensorId>& parents = v1() ? parents_[t] : op.args;
  for (TensorId p : parents) {
    StorageId ps = storage(p);
    if (v1() && ref_ext_[ps] <= 0) continue;  // RuntimeV1 only updates externally referenced storages
    last_access_[ps] = result_.clock;
  }
  // Lock the defined parents first, then materialize and lock the others; both
  // lists are taken before any of it happens (simrd wraps the filters in list()).
  size_t base = scratch_.size();
  for (TensorId p : parents)
    if (defined_[p]) scratch_.push_back(p);
  size_t undefined_at = scratch_.size();
  for (TensorId p : parents)
    if (!defined_[p]) scratch_.push_back(p);
  size_t end = scratch_.size();
  for (size_t i = base; i < undefined_at; ++i) Lock(storage(scratch_[i]));
  for (size_t i = undefined_at; i < end; ++i) {
    TensorId p = scratch_[i];
    if (!defined_[p]) Materialize(p, true);  // a sibling may have defined it meanwhile
    Lock(storage(p));
  }
  scratch_.resize(base);

  if (script_) ApplyScript();
  if (script_ && !heuristic_) {
    if (OverBudget(op.total_size)) {
      CaptureOom();
      result_.script_failure = ScriptFailure{
          -1, events_,
          fmt::format("computing {} needs {} bytes with {} in use, over the budget of {}", trace_.tensors[t].name,
                      op.total_size, memory_, budget_)};
      throw ScriptSignal{};
    }
  } else if (OverBudget(op.total_size)) {
    Free(op.total_size);
  }

  size_t siblings_at = scratch_.size();
  ComputeTensor(t, remat, siblings_at);

  if (v1()) {
    // simrd iterates the live list: a banished parent removes itself from it.
    for (size_t i = 0; i < parents_[t].size(); ++i) {
      StorageId ps = storage(parents_[t][i]);
      Unlock(ps);
      auto& deps = evicted_dependents_[ps];
      for (size_t k = siblings_at; k < scratch_.size(); ++k)
        if (storage(scratch_[k]) != ps) deps.erase(scratch_[k]);
      if (storage(t) != ps) deps.erase(t);
      TryBanish(ps);
    }
  } else {
    for (TensorId p : op.args) Unlock(storage(p));
  }
  scratch_.resize(siblings_at);

  if (static_cast<double>(result_.remat_compute) > remat_limit_) throw ThrashSignal{};
  Bottleneck(t);
  frames_.pop_back();
}

void Engine::Bottleneck(TensorId t) {
  const Operator& op = trace_.op_of(t);
  int64_t need = op.total_size;
  for (TensorId p : v1() ? parents_[t] : op.args) need += trace_.tensors[p].size;
  result_.bottleneck_memory = std::max(result_.bottleneck_memory, need);
}

// simrd: _compute(). Leaves the rematerialized siblings on scratch_ from
// remat_siblings_at (RuntimeV1 needs them).
void Engine::ComputeTensor(TensorId t, bool remat, size_t remat_siblings_at) {
  const Operator& op = trace_.op_of(t);
  // Siblings in output order, then t: which were defined, which storages were evicted.
  std::vector<StorageId>& remat_storages = remat_storages_;
  remat_storages.clear();
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    TensorId u = op.first_output + i;
    if (u == t) continue;
    if (!defined_[u]) scratch_.push_back(u);
    if (!material_[storage(u)]) remat_storages.push_back(storage(u));
  }
  if (!material_[storage(t)]) remat_storages.push_back(storage(t));

  const size_t n_remat_storages = remat_storages.size();
  result_.clock += op.compute;
  memory_ += op.total_size;
  result_.max_memory = std::max(result_.max_memory, memory_);
  if (observer_)
    observer_->OnComputation({events_, t, remat, result_.clock, memory_, step_,
                              static_cast<int32_t>(frames_.size()) - 1});
  ++events_;
  material_[storage(t)] = 1;
  defined_[t] = 1;
  (remat ? result_.remat_compute : result_.model_compute) += op.compute;
  for (size_t k = remat_siblings_at; k < scratch_.size(); ++k) {
    material_[storage(scratch_[k])] = 1;
    defined_[scratch_[k]] = 1;
  }
  // Outputs that were already defined were computed twice; free the copies.
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    TensorId u = op.first_output + i;
    if (u == t) continue;
    bool was_rematerialized = false;
    for (size_t k = remat_siblings_at; k < scratch_.size(); ++k) was_rematerialized |= scratch_[k] == u;
    if (!was_rematerialized) memory_ -= trace_.tensors[u].size;
  }
  for (size_t i = 0; i < n_remat_storages; ++i) MakeEvictable(remat_storages[i]);

  if (maintain_regions_) {
    affected_.clear();
    affected_rev_.clear();
    for (size_t i = 0; i < n_remat_storages; ++i) {
      StorageId us = remat_storages[i];
      Rebuild(fwd_[us], us, false);
      Rebuild(rev_[us], us, true);
      // Rebuild() moves the stamp; collect the affected sets afterwards.
    }
    uint32_t mark = ++stamp_;
    for (size_t i = 0; i < n_remat_storages; ++i) {
      StorageId us = remat_storages[i];
      for (StorageId x : rev_[us].frontier)
        if (mark_a_[x] != mark) {
          mark_a_[x] = mark;
          affected_.push_back(x);
        }
      for (StorageId x : fwd_[us].frontier)
        if (mark_b_[x] != mark) {
          mark_b_[x] = mark;
          affected_rev_.push_back(x);
        }
    }
    // A pinned storage stays pinned and is never scored, evicted or absorbed
    // from again, so its regions are never read: skip their upkeep.
    for (StorageId x : affected_)
      if (!pinned_[x]) Rebuild(fwd_[x], x, false);
    for (StorageId x : affected_rev_)
      if (!pinned_[x]) Rebuild(rev_[x], x, true);
  }
  if (maintain_eq_) {
    for (size_t i = 0; i < n_remat_storages; ++i) {
      StorageId s = remat_storages[i];
      if (ecn_[s] < 0) SimrdAssertion("a rematerialized storage has no equivalence class");
      node_value_[Find(ecn_[s])] -= compute_[s];
      ecn_[s] = -1;
    }
  }
}

void Engine::Free(int64_t size) {
  while (OverBudget(size)) {
    if (pool_live_ == 0) {
      CaptureOom();
      throw OomSignal{};
    }
    if (observer_ || next_override_ < overrides_.size()) {
      DecisionPoint where;
      where.index = decisions_;
      where.event = events_;
      where.clock = result_.clock;
      where.program_step = step_;
      where.remat_depth = static_cast<int32_t>(frames_.size()) - 1;
      where.tensor = frames_.back();
      where.request = size;
      where.memory_usage = memory_;
      where.pool_size = pool_live_;
      Evict(ChooseObserved(where), true);
    } else {
      Evict(Choose(), true);
    }
    ++decisions_;
  }
}

// Choose() plus the runner-up, the terms of both, overrides and the observer.
StorageId Engine::ChooseObserved(const DecisionPoint& where) {
  DecisionPoint d = where;
  if (heuristic_->cost == CostTerm::kRandom) {
    d.chosen = Choose();
  } else {
    double best = std::numeric_limits<double>::infinity(), second = best;
    StorageId best_s = -1, second_s = -1;
    for (StorageId s : pool_) {
      if (s < 0) continue;
      double score = Score(s);
      ++result_.heuristic_evals;
      if (score <= best) {
        second = best;
        second_s = best_s;
        best = score;
        best_s = s;
      } else if (score <= second) {
        second = score;
        second_s = s;
      }
      if (score == 0) break;
    }
    if (best_s < 0) SimrdAssertion("no storage scored at most +inf");
    d.chosen = best_s;
    d.score = best;
    d.runner_up = second_s;
    d.runner_up_score = second;
    d.terms = Terms(best_s);
    if (second_s >= 0) d.runner_up_terms = Terms(second_s);
  }
  if (next_override_ < overrides_.size() && overrides_[next_override_].first == decisions_) {
    StorageId s = overrides_[next_override_++].second;
    if (s < 0 || s >= static_cast<StorageId>(pool_pos_.size()) || pool_pos_[s] < 0)
      throw Error(fmt::format("override at decision {}: storage {} is not in the eviction pool then", decisions_,
                              s >= 0 && s < static_cast<StorageId>(trace_.storages.size())
                                  ? trace_.tensors[trace_.storages[s].root].name
                                  : std::to_string(s)));
    d.chosen = s;
    d.overridden = true;
    if (heuristic_->cost != CostTerm::kRandom) {
      d.score = Score(s);
      d.terms = Terms(s);
    }
  }
  if (observer_) observer_->OnDecision(d);
  return d.chosen;
}

// Script mode: evict the entries scheduled before computation events_.
void Engine::ApplyScript() {
  while (next_script_ < script_->size() && (*script_)[next_script_].event < events_) {
    result_.script_failure = ScriptFailure{static_cast<int64_t>(next_script_), (*script_)[next_script_].event,
                                           "entries must be sorted by event"};
    throw ScriptSignal{};
  }
  while (next_script_ < script_->size() && (*script_)[next_script_].event == events_) {
    StorageId s = (*script_)[next_script_].storage;
    std::string why;
    if (s < 0 || s >= static_cast<StorageId>(material_.size()))
      why = "no such storage";
    else if (!material_[s])
      why = fmt::format("storage {} is not material", trace_.tensors[trace_.storages[s].root].name);
    else if (pinned_[s])
      why = fmt::format("storage {} is pinned", trace_.tensors[trace_.storages[s].root].name);
    else if (ref_int_[s] > 0)
      why = fmt::format("storage {} is locked by a pending computation", trace_.tensors[trace_.storages[s].root].name);
    if (!why.empty()) {
      result_.script_failure = ScriptFailure{static_cast<int64_t>(next_script_), events_, why};
      throw ScriptSignal{};
    }
    Evict(s, true);
    ++next_script_;
  }
}

void Engine::CaptureOom() {
  OomContext c;
  TensorId inner = frames_.back();
  c.program_op = trace_.op_of(frames_.front()).name;
  c.op = trace_.op_of(inner).name;
  c.tensor = trace_.tensors[inner].name;
  c.request = trace_.op_of(inner).total_size;
  c.memory_usage = memory_;
  for (size_t s = 0; s < material_.size(); ++s) {
    if (!material_[s]) continue;
    if (pinned_[s]) {
      c.pinned_memory += trace_.storages[s].size;
    } else if (ref_int_[s] > 0) {
      c.locked_memory += trace_.storages[s].size;
      ++c.locked_storages;
    }
  }
  c.remat_depth = static_cast<int32_t>(frames_.size()) - 1;
  c.program_step = step_;
  c.event = events_;
  c.frames = frames_;
  result_.oom = std::move(c);
}

// simrd: _evict() of the runtime in use, including RuntimeV2Optimized's
// region and equivalence-class updates.
void Engine::Evict(StorageId s, bool by_heuristic) {
  if (!v1() && pinned_[s]) SimrdAssertion("tried to evict a pinned storage");
  material_[s] = 0;
  memory_ -= trace_.storages[s].size;
  MakeUnevictable(s);
  for (TensorId t : storage_tensors_[s]) {
    defined_[t] = 0;
    if (v1())
      for (TensorId p : parents_[t])
        if (storage(p) != s) evicted_dependents_[storage(p)].insert(t);
  }
  ++result_.evict_count[s];
  if (by_heuristic) {
    ++result_.heuristic_evictions;
    ++result_.heuristic_evict_count[s];
  } else {
    ++result_.eager_evictions;
  }

  if (maintain_regions_) {
    // Copies: Absorb() may edit s's own regions when the storage graph has a cycle.
    std::vector<StorageId> rev_frontier = rev_[s].frontier;
    // Pinned storages' regions are never read again (see ComputeTensor).
    for (StorageId ps : rev_frontier)
      if (!pinned_[ps]) Absorb(fwd_[ps], s, false);
    std::vector<StorageId> fwd_frontier = fwd_[s].frontier;
    for (StorageId cs : fwd_frontier)
      if (!pinned_[cs]) Absorb(rev_[cs], s, true);
    fwd_[s].Clear();
    rev_[s].Clear();
  }
  if (maintain_eq_) {
    if (ecn_[s] >= 0) SimrdAssertion("an evicted storage already has an equivalence class");
    ecn_[s] = NewNode(compute_[s]);
    ForEachNeighbour(s, [&](StorageId n) {
      if (!material_[n]) Merge(ecn_[n], ecn_[s]);
    });
  }
}

// simrd: RuntimeV1._try_banish_V1().
void Engine::TryBanish(StorageId s) {
  if (ref_ext_[s] > 0 || !evicted_dependents_[s].empty()) return;
  for (TensorId t : storage_tensors_[s])
    if (tensor_ref_[t] != 0) SimrdAssertion("tried to banish a storage with live tensors");
  if (material_[s]) {
    ref_int_[s] = 0;
    Evict(s, false);
    if (observer_) observer_->OnEagerEviction({s, events_, result_.clock, step_});
  }
  for (TensorId t : storage_tensors_[s]) {
    for (size_t i = 0; i < parents_[t].size(); ++i) {
      TensorId p = parents_[t][i];
      StorageId ps = storage(p);
      if (ps == s) continue;
      evicted_dependents_[ps].erase(t);
      auto& kids = children_[p];
      auto it = std::find(kids.begin(), kids.end(), t);
      if (it == kids.end()) SimrdAssertion("banishing a tensor missing from its parent's children");
      kids.erase(it);
    }
    for (size_t i = 0; i < children_[t].size(); ++i) {
      TensorId c = children_[t][i];
      if (storage(c) == s) continue;
      auto& ps = parents_[c];
      auto it = std::find(ps.begin(), ps.end(), t);
      if (it == ps.end()) SimrdAssertion("banishing a tensor missing from its child's parents");
      ps.erase(it);
      Pin(c);
    }
  }
  banished_[s] = 1;
}

StorageId Engine::Choose() {
  if (heuristic_->cost == CostTerm::kRandom) {
    ++result_.heuristic_evals;
    std::uniform_int_distribution<int32_t> pick(0, pool_live_ - 1);
    int32_t k = pick(rng_);
    for (StorageId s : pool_)
      if (s >= 0 && k-- == 0) return s;
  }
  double best = std::numeric_limits<double>::infinity();
  StorageId best_s = -1;
  for (size_t i = 0; i < pool_.size(); ++i) {
    StorageId s = pool_[i];
    if (s < 0) continue;
    double score = Score(s);
    ++result_.heuristic_evals;
    if (score <= best) {  // the last of equal scores wins
      best = score;
      best_s = s;
    }
    if (score == 0) break;
  }
  if (best_s < 0) SimrdAssertion("no storage scored at most +inf");
  return best_s;
}

// simrd's evaluate() of each heuristic, from the terms: cost / (size *
// staleness) with the factors the heuristic uses; +inf for a zero denominator.
double Engine::Score(StorageId s) {
  const HeuristicSpec& h = *heuristic_;
  ScoreTerms t = Terms(s);
  if (h.cost == CostTerm::kLastAccess)
    return t.cost == kNever ? -std::numeric_limits<double>::infinity() : static_cast<double>(t.cost);
  if (!h.divide_by_size && !h.divide_by_staleness) return static_cast<double>(t.cost);
  uint128 den = h.divide_by_size ? static_cast<uint128>(t.size) : 1;
  if (h.divide_by_staleness) {
    if (t.staleness < 0) {
      // staleness is +inf: size * inf is nan for size 0 (score inf), inf otherwise (score 0.0).
      return den == 0 ? std::numeric_limits<double>::infinity() : 0.0;
    }
    den *= static_cast<uint128>(t.staleness);
  }
  if (den == 0) return std::numeric_limits<double>::infinity();
  if (t.cost < 0) return -ExactDivide(static_cast<uint64_t>(-t.cost), den);
  return ExactDivide(static_cast<uint64_t>(t.cost), den);
}

// The terms of s's score under the current heuristic (see ScoreTerms).
ScoreTerms Engine::Terms(StorageId s) {
  ScoreTerms t;
  t.size = trace_.storages[s].size;
  t.staleness = last_access_[s] == kNever ? -1 : result_.clock - last_access_[s];
  switch (heuristic_->cost) {
    case CostTerm::kRegions: t.cost = compute_[s] + fwd_[s].compute + rev_[s].compute; break;
    case CostTerm::kReverseRegion: t.cost = compute_[s] + rev_[s].compute; break;
    case CostTerm::kEqClass: t.cost = EqClassCompute(s); break;
    case CostTerm::kLocal: t.cost = compute_[s]; break;
    case CostTerm::kOne: t.cost = 1; break;
    case CostTerm::kLastAccess: t.cost = last_access_[s]; break;
    case CostTerm::kUnoptimized: {
      Rebuild(unopt_fwd_, s, false);
      Rebuild(unopt_rev_, s, true);
      int64_t last = last_access_[s];
      t.cost = compute_[s];
      ++stamp_;
      for (const Region* r : {&unopt_fwd_, &unopt_rev_})
        for (StorageId u : r->interior)
          if (mark_a_[u] != stamp_) {
            mark_a_[u] = stamp_;
            t.cost += compute_[u];
            if (last_access_[u] != kNever && (last == kNever || last_access_[u] > last)) last = last_access_[u];
          }
      t.staleness = last == kNever ? -1 : result_.clock - last;
      break;
    }
    case CostTerm::kRandom: break;
  }
  return t;
}

// simrd: DTREqClass.evaluate(): s.compute plus the value of each distinct
// class among the evicted neighbours.
int64_t Engine::EqClassCompute(StorageId s) {
  int64_t total = compute_[s];
  size_t base = dfs_.size();
  auto visit = [&](StorageId n) {
    if (material_[n]) return;
    int32_t root = Find(ecn_[n]);
    for (size_t i = base; i < dfs_.size(); ++i)
      if (dfs_[i] == root) return;
    dfs_.push_back(root);
    total += node_value_[root];
  };
  ForEachNeighbour(s, visit);
  dfs_.resize(base);
  return total;
}

// simrd: Region.rebuild(): the evicted storages reachable from base through
// evicted storages (interior) and the material storages at its edge (frontier).
void Engine::Rebuild(Region& r, StorageId base, bool reverse) {
  r.Clear();
  uint32_t mark = ++stamp_;
  dfs_.clear();
  dfs_.push_back(base);
  auto visit = [&](StorageId us) {
    if (material_[us]) {
      if (us != base && mark_b_[us] != mark) {
        mark_b_[us] = mark;
        r.frontier.push_back(us);
      }
    } else if (mark_a_[us] != mark) {
      mark_a_[us] = mark;
      r.compute += compute_[us];
      r.interior.push_back(us);
      dfs_.push_back(us);
    }
  };
  while (!dfs_.empty()) {
    StorageId s = dfs_.back();
    dfs_.pop_back();
    if (v1()) {  // RuntimeV1 edits its lists while banishing: walk them as they are
      for (TensorId t : storage_tensors_[s])
        for (TensorId u : reverse ? parents_[t] : children_[t]) visit(storage(u));
    } else {
      const StorageAdjacency& adj = reverse ? trace_.storage_parents : trace_.storage_children;
      for (const StorageEdge* e = adj.begin(s); e != adj.end(s) && e->key < tensor_count_; ++e) visit(e->storage);
    }
  }
}

// simrd: Region.absorb(): r's frontier storage fs was just evicted; fs joins
// the interior with the interior of its own region, whose frontier joins r's.
// Quirk kept from simrd (optimization/region.py): fs's compute is added even
// if fs is already in the interior, and every compute is the storage's
// current one, not the one it had when the region was built.
void Engine::Absorb(Region& r, StorageId fs, bool reverse) {
  Region& own = reverse ? rev_[fs] : fwd_[fs];
  Region copy;
  const Region& reg = (&own == &r) ? (copy = own, copy) : own;
  auto it = std::find(r.frontier.begin(), r.frontier.end(), fs);
  if (it == r.frontier.end()) SimrdAssertion("an evicted storage is missing from a region frontier");
  *it = r.frontier.back();
  r.frontier.pop_back();
  uint32_t mark = ++stamp_;
  for (StorageId x : r.frontier) mark_a_[x] = mark;
  for (StorageId x : reg.frontier)
    if (mark_a_[x] != mark) {
      mark_a_[x] = mark;
      r.frontier.push_back(x);
    }
  for (StorageId x : r.interior) mark_b_[x] = mark;
  bool fs_in_interior = mark_b_[fs] == mark;
  diff_.clear();
  for (StorageId x : reg.interior)
    if (mark_b_[x] != mark) {
      mark_b_[x] = mark;
      diff_.push_back(x);
    }
  bool fs_in_diff = !fs_in_interior && mark_b_[fs] == mark;
  for (StorageId d : diff_) {
    r.compute += compute_[d];
    r.interior.push_back(d);
  }
  if (!fs_in_diff) {
    r.compute += compute_[fs];
    if (!fs_in_interior) r.interior.push_back(fs);
  }
}

int32_t Engine::NewNode(int64_t value) {
  node_parent_.push_back(-1);
  node_value_.push_back(value);
  return static_cast<int32_t>(node_parent_.size() - 1);
}

int32_t Engine::Find(int32_t node) {
  int32_t root = node;
  while (node_parent_[root] >= 0) root = node_parent_[root];
  while (node_parent_[node] >= 0) {
    int32_t next = node_parent_[node];
    node_parent_[node] = root;
    node = next;
  }
  return root;
}

// simrd: EqClassNode.merge(): a's class joins b's; b's root keeps the sum.
void Engine::Merge(int32_t a, int32_t b) {
  int32_t l = Find(a), r = Find(b);
  if (l == r) return;
  node_parent_[l] = r;
  node_value_[r] += node_value_[l];
}

}  // namespace

RunResult Replay(const Trace& trace, const ReplayConfig& config) { return Engine(trace, config).Run(); }

Baseline ComputeBaseline(const Trace& trace) {
  ReplayConfig config;
  config.runtime = RuntimeKind::kV1;
  RunResult r = Replay(trace, config);
  return {r.max_memory, r.model_compute, r.const_memory, r.bottleneck_memory};
}

}  // namespace dtr
