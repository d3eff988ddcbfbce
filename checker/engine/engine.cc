#include "checker/engine/engine.h"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

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

bool EagerEvictions(RuntimeKind runtime) {
  return runtime == RuntimeKind::kV2Eager || runtime == RuntimeKind::kV2EagerOptimized;
}

bool OptimizedRuntime(RuntimeKind runtime) {
  return runtime == RuntimeKind::kV2Optimized || runtime == RuntimeKind::kV2EagerOptimized;
}

std::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "pass";
    case Outcome::kOom: return "oom";
    case Outcome::kThrash: return "thrash";
    case Outcome::kInvalidScript: return "invalid-script";
    case Outcome::kStopped: return "stopped";
  }
  return "?";
}

Engine::Engine(const Trace& trace, const EngineOptions& options)
    : trace_(&trace),
      runtime_(options.runtime),
      eager_(EagerEvictions(options.runtime)),
      maintain_regions_(options.regions),
      maintain_eq_(options.eq_classes),
      budget_(options.budget),
      remat_limit_(options.remat_limit),
      work_limit_(options.work_limit),
      observer_(options.observer),
      watcher_(options.watcher) {
  if ((maintain_regions_ || maintain_eq_) && !OptimizedRuntime(runtime_))
    throw Error(fmt::format("{} does not maintain {} (use RuntimeV2Optimized or RuntimeV2EagerOptimized)",
                            RuntimeName(runtime_), maintain_regions_ ? "evicted regions" : "equivalence classes"));
  const size_t nt = trace.tensors.size(), ns = trace.storages.size();
  defined_.assign(nt, 0);
  tensor_ref_.assign(nt, 0);
  material_.assign(ns, 0);
  pinned_.assign(ns, 0);
  ref_int_.assign(ns, 0);
  ref_ext_.assign(ns, 0);
  compute_.assign(ns, 0);
  last_access_.assign(ns, kNeverAccessed);
  storage_tensor_count_.assign(ns, 0);
  pool_pos_.assign(ns, -1);
  regions_.Init(trace, maintain_regions_);
  if (maintain_eq_) eq_.Init(ns);
  if (v1()) {
    banishing_.children.resize(nt);
    banishing_.parents.resize(nt);
    banishing_.evicted_dependents.resize(ns);
    banishing_.banished.assign(ns, 0);
  }
  result_.budget = budget_;
  result_.evict_count.assign(ns, 0);
  result_.heuristic_evict_count.assign(ns, 0);
}

void Engine::SimrdAssertion(const std::string& what) const {
  int32_t line = step_ < static_cast<int32_t>(trace_->program.size()) ? trace_->program[step_].line : 0;
  throw SimrdAssertionError(
      fmt::format("{}:{}: {} (simrd stops with an assertion here)", trace_->source, line, what));
}

void Engine::CheckedAdd(int64_t& total, int64_t x, const char* what, const Trace& trace) {
  int64_t sum;
  if (!__builtin_add_overflow(total, x, &sum)) {
    total = sum;
    return;
  }
  throw InputError(fmt::format("{}: the {} passed 2^63 during the replay; the trace's numbers are too large",
                               trace.source, what));
}

void Engine::ContinueUnder(int64_t budget) {
  if (budget < budget_lo_ || budget > budget_hi_)
    throw std::logic_error(fmt::format("budget {} would change a budget comparison of the run so far ([{}, {}])",
                                       budget, budget_lo_, budget_hi_));
  budget_ = budget;
  result_.budget = budget;
}

RunResult Engine::Result(Outcome outcome) const {
  RunResult r = result_;
  r.outcome = outcome;
  r.events = events_;
  for (size_t s = 0; s < r.evict_count.size(); ++s) {
    r.distinct_evicted += r.evict_count[s] > 0;
    r.distinct_heuristic_evicted += r.heuristic_evict_count[s] > 0;
  }
  r.budget_lo = budget_lo_;
  r.budget_hi = budget_hi_;
  return r;
}

bool Engine::Advance() {
  if (at_point_) return true;
  if (done_ || thrashed_ || stop_requested_) return false;
  const std::vector<Step>& program = trace_->program;
  for (;;) {
    if (frames_.empty()) {
      if (step_ >= static_cast<int32_t>(program.size())) {
        done_ = true;
        return false;
      }
      const Step& st = program[step_];
      switch (st.kind) {
        case StepKind::kCompute:
          CreateOutputs(st.target);
          StartFrame(trace_->ops[st.target].first_output, false);
          break;
        case StepKind::kGet:
          Get(st.target);
          ++step_;
          break;
        case StepKind::kRelease:
          Release(st.target);
          ++step_;
          if (stop_requested_) return false;
          break;
        case StepKind::kPin:
          if (defined_[st.target]) {
            Pin(st.target);
            ++step_;
          } else {
            StartFrame(st.target, true);
          }
          break;
      }
      continue;
    }
    Frame& top = frames_.back();
    if (top.args_begin + top.next < top.args_end) {
      TensorId p = frame_args_[top.args_begin + top.next];
      if (!top.awaiting && !defined_[p]) {  // a sibling may have defined it meanwhile
        top.awaiting = true;
        StartFrame(p, true);  // invalidates `top`
        continue;
      }
      top.awaiting = false;
      Lock(storage(p));
      ++top.next;
      continue;
    }
    at_point_ = true;
    return true;
  }
}

// simrd: Runtime.compute() with Tensor.from_op(): the outputs exist (not yet
// material) before their operator's frame starts.
void Engine::CreateOutputs(OpId id) {
  const Operator& op = trace_->ops[id];
  if (maintain_regions_) regions_.Flush(*this);  // stale regions are rebuilt with the edges they had
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    TensorId u = op.first_output + i;
    const Tensor& t = trace_->tensors[u];
    StorageId s = t.storage;
    ++storage_tensor_count_[s];  // storage tensors are created in id order: a prefix
    ++ref_ext_[s];
    if (compute_[s] != t.storage_compute_after) {
      if (maintain_regions_) regions_.ComputeChanging(*this, s);
      NoteScoreChange(s);
    }
    compute_[s] = t.storage_compute_after;
    tensor_ref_[u] = 1;
    if (op.is_constant) result_.const_memory += t.size;
    if (!t.is_alias && maintain_eq_) eq_.set_node(s, eq_.NewNode(0));
  }
  tensor_count_ = op.first_output + op.num_outputs;
  if (maintain_regions_) regions_.Created(*this, id);
  if (v1()) BanishingCreate(id);
}

// simrd: the start of _materialize(): parents are accessed, the defined ones
// locked; the undefined ones (taken now, in order) are materialized and
// locked one by one by Advance().
void Engine::StartFrame(TensorId t, bool remat) {
  Frame f;
  f.tensor = t;
  f.remat = remat;
  f.args_begin = static_cast<int32_t>(frame_args_.size());
  const std::vector<TensorId>& parents = v1() ? banishing_.parents[t] : trace_->op_of(t).args;
  for (TensorId p : parents) {
    StorageId ps = storage(p);
    if (v1() && ref_ext_[ps] <= 0) continue;  // RuntimeV1 only updates externally referenced storages
    last_access_[ps] = result_.clock;
    NoteScoreChange(ps);
  }
  for (TensorId p : parents) {
    if (defined_[p])
      Lock(storage(p));
    else
      frame_args_.push_back(p);
  }
  f.args_end = static_cast<int32_t>(frame_args_.size());
  frames_.push_back(f);
}

void Engine::Compute() {
  if (!at_point_) throw Error("Engine::Compute() outside a computation point");
  at_point_ = false;
  const Frame f = frames_.back();
  const TensorId t = f.tensor;
  ComputeTensor(t, f.remat);
  if (v1()) {
    BanishingAfterCompute(t);
  } else {
    for (TensorId p : trace_->op_of(t).args) Unlock(storage(p));
  }
  siblings_.clear();
  if (static_cast<double>(result_.remat_compute) > remat_limit_) {
    thrashed_ = true;
    return;
  }
  Bottleneck(t);
  frame_args_.resize(f.args_begin);
  frames_.pop_back();
  if (frames_.empty()) FinishStep();
}

// The end of a program step whose frame just completed.
void Engine::FinishStep() {
  const Step& st = trace_->program[step_];
  if (st.kind == StepKind::kCompute) {
    const Operator& op = trace_->ops[st.target];
    for (int32_t i = 0; i < op.num_outputs; ++i) {
      last_access_[storage(op.first_output + i)] = result_.clock;
      NoteScoreChange(storage(op.first_output + i));
    }
  } else {
    Pin(st.target);
  }
  ++step_;
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
  } else if (eager_ && ref_ext_[s] == 0 && material_[s] && !pinned_[s]) {
    Evict(s, EvictionKind::kEager);
    NoteEagerEviction(s);
  }
}

void Engine::NoteEagerEviction(StorageId s) {
  if (observer_ && observer_->OnEagerEviction({s, events_, result_.clock, step_}) == Flow::kStop)
    stop_requested_ = true;
}

void Engine::Pin(TensorId t) {
  StorageId s = storage(t);
  if (!material_[s]) SimrdAssertion(fmt::format("cannot pin '{}', whose storage is evicted", trace_->tensors[t].name));
  if (pinned_[s]) return;
  Lock(s);
  pinned_[s] = 1;
}

void Engine::Lock(StorageId s) {
  if (v1() && banishing_.banished[s]) SimrdAssertion("cannot lock a banished storage");
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
  NoteScoreChange(s);
}

void Engine::MakeUnevictable(StorageId s) {
  int32_t pos = pool_pos_[s];
  if (pos < 0) return;
  pool_[pos] = -1;
  pool_pos_[s] = -1;
  --pool_live_;
  NoteScoreChange(s);
  size_t dead = pool_.size() - pool_live_;
  if (dead > 64 && dead > static_cast<size_t>(pool_live_)) {
    ++pool_epoch_;
    size_t w = 0;
    for (StorageId x : pool_)
      if (x >= 0) {
        pool_pos_[x] = static_cast<int32_t>(w);
        pool_[w++] = x;
      }
    pool_.resize(w);
  }
}

void Engine::Bottleneck(TensorId t) {
  const Operator& op = trace_->op_of(t);
  int64_t need = op.total_size;
  for (TensorId p : v1() ? banishing_.parents[t] : op.args)
    CheckedAdd(need, trace_->tensors[p].size, "size of an operator's arguments", *trace_);
  result_.bottleneck_memory = std::max(result_.bottleneck_memory, need);
}

// simrd: _compute(). Leaves the rematerialized siblings in siblings_
// (RuntimeV1 needs them after).
void Engine::ComputeTensor(TensorId t, bool remat) {
  const Operator& op = trace_->op_of(t);
  // Siblings in output order, then t: which were defined, which storages were evicted.
  siblings_.clear();
  remat_storages_.clear();
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    TensorId u = op.first_output + i;
    if (u == t) continue;
    if (!defined_[u]) siblings_.push_back(u);
    if (!material_[storage(u)]) remat_storages_.push_back(storage(u));
  }
  if (!material_[storage(t)]) remat_storages_.push_back(storage(t));

  CheckedAdd(result_.clock, op.compute, "clock", *trace_);
  memory_ += op.total_size;
  result_.max_memory = std::max(result_.max_memory, memory_);
  if (observer_ || watcher_) {
    const Computation c{
        events_, t, remat, result_.clock, memory_, step_, static_cast<int32_t>(frames_.size()) - 1};
    if (observer_ && observer_->OnComputation(c) == Flow::kStop) stop_requested_ = true;
    if (watcher_ && watcher_->OnComputation(c) == Flow::kStop) stop_requested_ = true;
  }
  ++events_;
  if (result_.heuristic_evals > work_limit_ - events_) stop_requested_ = true;
  material_[storage(t)] = 1;
  defined_[t] = 1;
  if (remat)
    CheckedAdd(result_.remat_compute, op.compute, "rematerialization compute", *trace_);
  else
    CheckedAdd(result_.model_compute, op.compute, "model compute", *trace_);
  for (TensorId u : siblings_) {
    material_[storage(u)] = 1;
    defined_[u] = 1;
  }
  // Outputs that were already defined were computed twice; free the copies.
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    TensorId u = op.first_output + i;
    if (u == t) continue;
    if (std::find(siblings_.begin(), siblings_.end(), u) == siblings_.end()) memory_ -= trace_->tensors[u].size;
  }
  for (StorageId s : remat_storages_) MakeEvictable(s);

  if (maintain_regions_) regions_.Rematerialized(*this, remat_storages_);
  if (maintain_eq_) {
    for (StorageId s : remat_storages_) {
      if (eq_.node_of(s) < 0) SimrdAssertion("a rematerialized storage has no equivalence class");
      eq_.value(eq_.Find(eq_.node_of(s))) -= compute_[s];
      eq_.set_node(s, -1);
    }
  }
  remat_storages_.clear();
}

void Engine::CaptureOom() {
  OomContext c;
  TensorId inner = frames_.back().tensor;
  c.program_op = trace_->op_of(frames_.front().tensor).name;
  c.op = trace_->op_of(inner).name;
  c.tensor = trace_->tensors[inner].name;
  c.request = trace_->op_of(inner).total_size;
  c.memory_usage = memory_;
  for (size_t s = 0; s < material_.size(); ++s) {
    if (!material_[s]) continue;
    if (pinned_[s]) {
      c.pinned_memory += trace_->storages[s].size;
    } else if (ref_int_[s] > 0) {
      c.locked_memory += trace_->storages[s].size;
      ++c.locked_storages;
    }
  }
  c.remat_depth = static_cast<int32_t>(frames_.size()) - 1;
  c.program_step = step_;
  c.event = events_;
  for (const Frame& f : frames_) c.frames.push_back(f.tensor);
  result_.oom = std::move(c);
}

// simrd: _evict() of the runtime in use, including RuntimeV2Optimized's
// region and equivalence-class updates.
void Engine::Evict(StorageId s, EvictionKind kind) {
  if (!v1() && pinned_[s]) SimrdAssertion("tried to evict a pinned storage");
  if (maintain_regions_) regions_.Flush(*this);  // before s stops being material
  material_[s] = 0;
  memory_ -= trace_->storages[s].size;
  MakeUnevictable(s);
  for (TensorId t : storage_tensors(s)) defined_[t] = 0;
  if (v1()) BanishingOnEvict(s);
  ++result_.evict_count[s];
  if (kind == EvictionKind::kChosen) {
    ++result_.heuristic_evictions;
    ++result_.heuristic_evict_count[s];
  } else {
    ++result_.eager_evictions;
  }
  if (maintain_regions_) regions_.Evicted(*this, s);
  if (maintain_eq_) {
    if (eq_.node_of(s) >= 0) SimrdAssertion("an evicted storage already has an equivalence class");
    const int32_t node = eq_.NewNode(compute_[s]);
    eq_.set_node(s, node);
    ForEachNeighbour(s, [&](StorageId n) {
      if (!material_[n]) eq_.Merge(eq_.node_of(n), node);
    });
  }
}

void Engine::TrackScoreChanges() {
  if (track_scores_) return;
  track_scores_ = true;
  score_changed_.assign(trace_->storages.size(), 0);
  score_changes_.clear();
  regions_.TrackChanges();
}

int64_t Engine::EqClassCompute(StorageId s) {
  int64_t total = compute_[s];
  // Distinct roots among the evicted neighbours: few, so a short list.
  int32_t roots[16];
  std::vector<int32_t> more;
  int n_roots = 0;
  ForEachNeighbour(s, [&](StorageId n) {
    if (material_[n]) return;
    int32_t root = eq_.Find(eq_.node_of(n));
    for (int i = 0; i < n_roots; ++i)
      if (roots[i] == root) return;
    if (std::find(more.begin(), more.end(), root) != more.end()) return;
    if (n_roots < 16)
      roots[n_roots++] = root;
    else
      more.push_back(root);
    total += eq_.value(root);
  });
  return total;
}

void Engine::WalkEvictedRegion(StorageId base, bool reverse, std::vector<StorageId>& interior) {
  regions_.Walk(*this, base, reverse, interior, walk_frontier_);
}

void Engine::AppendKey(std::string& key) const {
  auto put = [&key](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(step_);
  put(static_cast<int64_t>(frames_.size()));
  for (const Frame& f : frames_) {
    put(f.tensor);
    put(f.next * 2 + f.awaiting);
    put(f.args_end - f.args_begin);
    for (TensorId p : frame_args(f)) put(p);
  }
  auto bits = [&key](const std::vector<uint8_t>& v) {
    uint8_t acc = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      acc |= static_cast<uint8_t>((v[i] ? 1 : 0) << (i % 8));
      if (i % 8 == 7 || i + 1 == v.size()) {
        key.push_back(static_cast<char>(acc));
        acc = 0;
      }
    }
  };
  bits(defined_);
  bits(material_);
}

void StepLookahead::ForEach(const Engine& engine,
                            const std::function<void(TensorId, int64_t)>& visit) {
  if (!engine.at_point()) throw Error("StepLookahead outside a computation point");
  if (engine.runtime() == RuntimeKind::kV1) throw Error("StepLookahead models RuntimeV2 only");
  const Trace& trace = engine.trace();
  if (defined_at_.size() != trace.tensors.size()) {
    defined_at_.assign(trace.tensors.size(), 0);
    stamp_ = 0;
  }
  if (++stamp_ == 0) {  // wrapped
    std::fill(defined_at_.begin(), defined_at_.end(), 0);
    stamp_ = 1;
  }
  auto defined = [&](TensorId t) { return engine.defined(t) || defined_at_[t] == stamp_; };
  frames_.clear();
  args_.clear();
  for (const Engine::Frame& f : engine.frames()) {
    const int32_t begin = static_cast<int32_t>(args_.size());
    for (TensorId a : engine.frame_args(f)) args_.push_back(a);
    frames_.push_back({f.tensor, f.awaiting, begin, static_cast<int32_t>(args_.size()), f.next});
  }
  int64_t event = engine.event();
  // Engine::Advance and Engine::Compute, without evictions: a computation
  // defines every output of its operator; nothing becomes undefined.
  while (!frames_.empty()) {
    Frame& top = frames_.back();
    if (top.begin + top.next < top.end) {
      const TensorId p = args_[top.begin + top.next];
      if (!top.awaiting && !defined(p)) {
        top.awaiting = true;
        const int32_t begin = static_cast<int32_t>(args_.size());
        for (TensorId q : trace.op_of(p).args)
          if (!defined(q)) args_.push_back(q);
        frames_.push_back({p, false, begin, static_cast<int32_t>(args_.size()), 0});
        continue;
      }
      top.awaiting = false;
      ++top.next;
      continue;
    }
    visit(top.tensor, event++);
    const Operator& op = trace.op_of(top.tensor);
    for (int32_t i = 0; i < op.num_outputs; ++i) defined_at_[op.first_output + i] = stamp_;
    args_.resize(top.begin);
    frames_.pop_back();
  }
}

}  // namespace dtr
