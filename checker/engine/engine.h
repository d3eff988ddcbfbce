// The replay engine: the whole state of a replay of a trace by one of
// simrd's runtimes (runtime/v1.py, runtime/v2.py), advanced one computation
// point at a time, copyable at any point. Policies choose the evictions
// (checker/engine/eviction_policy.h); checker/engine/replay.h drives the loop.
//
// A computation point is the moment of simrd's budget check in
// _materialize(): the frames of the computation have started, its arguments
// are locked, its outputs are not allocated yet. Between two points the
// engine runs the program (external references, eager evictions, pins) and
// starts the frames of pending rematerializations; at a point the driver may
// evict any evictable storage, then calls Compute().
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
//  - The frame stack is simrd's recursion of _materialize(): frame k+1 is
//    materializing argument frame_args(k)[next] of frame k ("awaiting").
//    A frame holds one lock on each argument storage it has locked so far.
//  - With evicted regions or equivalence classes on (EngineOptions), their
//    values are simrd's incremental ones (checker/engine/evicted_regions.h,
//    checker/engine/equivalence_classes.h), never recomputed from scratch; region
//    rebuilds simrd does after a computation are deferred until a region is
//    read, a storage evicted or a tensor created (regions() flushes them).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "checker/engine/equivalence_classes.h"
#include "checker/engine/evicted_regions.h"
#include "checker/engine/run_result.h"
#include "checker/engine/score_index.h"
#include "model/error.h"
#include "model/trace.h"

namespace dtr {

// Thrown where simrd itself stops with an assertion (the run has no
// outcome in simrd): the trace leads simrd astray. A kind of InputError: commands report it like any bad input;
// searches that try many runs catch exactly this to skip such a run.
class SimrdAssertionError : public InputError {
 public:
  using InputError::InputError;
};

struct EngineOptions {
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  int64_t budget = kInfiniteBudget;  // what Fits() compares with
  // Thrash when remat_compute > remat_limit (simrd compares an int with a float).
  double remat_limit = std::numeric_limits<double>::infinity();
  bool regions = false;     // maintain evicted regions (optimized runtimes only)
  bool eq_classes = false;  // maintain equivalence classes (optimized runtimes only)
  // Stop (Outcome::kStopped) at the first computation after which the run's
  // heuristic evaluations plus computations exceed it: a count, so where a
  // run stops does not depend on the machine.
  int64_t work_limit = std::numeric_limits<int64_t>::max();
  ReplayObserver* observer = nullptr;  // computations and eager evictions
  // Computations only, after the observer (a progress display, a CPU limit).
  ReplayObserver* watcher = nullptr;
};

class Engine {
 public:
  // A pending materialization (simrd: one _materialize() call on the stack).
  struct Frame {
    TensorId tensor = 0;
    bool remat = false;
    bool awaiting = false;  // frame_args()[next] is being materialized by the frame above
    int32_t args_begin = 0;  // its undefined arguments, in order: frame_args_[args_begin, args_end)
    int32_t args_end = 0;
    int32_t next = 0;  // offset: the undefined arguments before it are materialized and locked
  };

  // trace must outlive the engine and its copies. Throws Error if the
  // runtime cannot maintain what the options ask for.
  Engine(const Trace& trace, const EngineOptions& options);

  // --- Stepping -----------------------------------------------------------
  // Runs the program to the next computation point (or stays at the current
  // one). False when the program is done, the run thrashed, or an observer
  // asked to stop (see done(), thrashed(), stop_requested()). Throws Error
  // where simrd stops with an assertion.
  bool Advance();
  // At a computation point: allocates the request and computes (no budget
  // check: see Fits()), unlocks the arguments and ends the frame.
  void Compute();
  // memory + bytes <= budget, recording which budgets give the same answer.
  bool Fits(int64_t bytes) {
    int64_t total = memory_ + bytes;  // cannot overflow: the parser bounds all sizes by 2^62
    if (total > budget_) {
      if (total - 1 < budget_hi_) budget_hi_ = total - 1;
      return false;
    }
    if (total > budget_lo_) budget_lo_ = total;
    return true;
  }
  // The budgets every Fits() so far answers the same for: [budget_lo, budget_hi].
  int64_t budget_lo() const { return budget_lo_; }
  int64_t budget_hi() const { return budget_hi_; }
  // Goes on under another budget, for which every Fits() so far gives the
  // same answer, so the run so far is its run too (checker/drivers/rising_replays.h).
  // Throws std::logic_error if the budget is outside [budget_lo, budget_hi].
  void ContinueUnder(int64_t budget);
  bool Evictable(StorageId s) const { return pool_pos_[s] >= 0; }
  enum class EvictionKind { kChosen, kEager };
  // REQUIRES: Evictable(s), or kind == kEager. kChosen counts as a heuristic
  // eviction (simrd's _free()); kEager as the runtime's own.
  void Evict(StorageId s, EvictionKind kind = EvictionKind::kChosen);
  // Records the OOM context of the current computation point in the result.
  void CaptureOom();
  void CountDecision() { ++decisions_; }
  void CountEvaluations(int64_t n) { result_.heuristic_evals += n; }
  void set_observer(ReplayObserver* observer) { observer_ = observer; }
  void set_watcher(ReplayObserver* watcher) { watcher_ = watcher; }
  void clear_stop() { stop_requested_ = false; }
  // The result so far, with the given outcome (distinct counts computed now).
  RunResult Result(Outcome outcome) const;

  // --- Where the run is ---------------------------------------------------
  bool at_point() const { return at_point_; }
  bool done() const { return done_; }
  bool thrashed() const { return thrashed_; }
  bool stop_requested() const { return stop_requested_; }
  TensorId tensor() const { return frames_.back().tensor; }  // REQUIRES: a frame
  int64_t request() const { return trace_->op_of(tensor()).total_size; }
  int64_t event() const { return events_; }  // computations so far
  int64_t decisions() const { return decisions_; }
  int32_t program_step() const { return step_; }
  int64_t clock() const { return result_.clock; }
  int64_t memory() const { return memory_; }
  int64_t peak_memory() const { return result_.max_memory; }
  int64_t budget() const { return budget_; }
  const std::vector<Frame>& frames() const { return frames_; }
  std::span<const TensorId> frame_args(const Frame& f) const {
    return {frame_args_.data() + f.args_begin, frame_args_.data() + f.args_end};
  }
  const Trace& trace() const { return *trace_; }
  RuntimeKind runtime() const { return runtime_; }
  const RunResult& counters() const { return result_; }

  // --- State --------------------------------------------------------------
  bool material(StorageId s) const { return material_[s]; }
  const uint8_t* material_flags() const { return material_.data(); }  // indexed by StorageId
  bool pinned(StorageId s) const { return pinned_[s]; }
  int32_t locks(StorageId s) const { return ref_int_[s]; }
  int32_t external_refs(StorageId s) const { return ref_ext_[s]; }
  bool defined(TensorId t) const { return defined_[t]; }
  int64_t last_access(StorageId s) const { return last_access_[s]; }
  int64_t storage_compute(StorageId s) const { return compute_[s]; }
  TensorId tensors_created() const { return tensor_count_; }
  // The tensors of s created so far (simrd's Storage.tensors), root first.
  std::span<const TensorId> storage_tensors(StorageId s) const {
    const std::vector<TensorId>& all = trace_->storages[s].tensors;
    return {all.data(), all.data() + storage_tensor_count_[s]};
  }
  // The eviction pool in order: slots hold a storage or -1 (removed).
  const std::vector<StorageId>& pool_slots() const { return pool_; }
  int32_t pool_size() const { return pool_live_; }
  // The evicted regions, stale ones rebuilt first (see checker/engine/evicted_regions.h).
  const EvictedRegions& regions() {
    regions_.Flush(*this);
    return regions_;
  }
  // s's forward region, walked first if it was deferred.
  const Region& forward_region(StorageId s) {
    regions_.Flush(*this);
    return regions_.ForwardOf(*this, s);
  }
  bool maintains_regions() const { return maintain_regions_; }
  bool maintains_eq_classes() const { return maintain_eq_; }
  // simrd's DTREqClass cost: s.compute plus the value of each distinct class
  // among the evicted neighbours. REQUIRES: maintains_eq_classes().
  int64_t EqClassCompute(StorageId s);
  // The interior simrd's Region.rebuild() finds from scratch (DTRUnopt), into `interior`.
  void WalkEvictedRegion(StorageId base, bool reverse, std::vector<StorageId>& interior);
  // RuntimeV1's tensor lists as banishing left them (simrd's Tensor.parents/children).
  const std::vector<TensorId>& v1_parents(TensorId t) const { return banishing_.parents[t]; }
  const std::vector<TensorId>& v1_children(TensorId t) const { return banishing_.children[t]; }

  // --- Score changes --------------------------------------------------------
  // For an index of the pool's scores (checker/engine/score_index.h), which the
  // engine carries (so that copies carry it) and a policy keeps: after
  // TrackScoreChanges(), every storage whose pool slot, last access,
  // compute or evicted regions change is logged until DrainScoreChanges().
  void TrackScoreChanges();
  bool tracks_score_changes() const { return track_scores_; }
  // Flushes the stale regions, then calls f(s) once for each storage logged
  // since the last drain, and empties the log.
  template <class F>
  void DrainScoreChanges(F&& f) {
    regions_.Flush(*this);
    regions_.DrainChanges(f);
    for (size_t i = 0; i < score_changes_.size(); ++i) {  // f may log more
      score_changed_[score_changes_[i]] = 0;
      f(score_changes_[i]);
    }
    score_changes_.clear();
  }
  ScoreIndex& score_index() { return score_index_; }
  // Changes whenever the pool's slots are renumbered.
  int64_t pool_epoch() const { return pool_epoch_; }
  int32_t pool_position(StorageId s) const { return pool_pos_[s]; }

  // Calls f(n) for each storage n != s holding a visible parent or child of
  // one of s's tensors (simrd: Storage.evicted_neighbors before its filter),
  // possibly more than once. RuntimeV2 family only.
  template <class F>
  void ForEachNeighbour(StorageId s, F&& f) const {
    for (const StorageAdjacency* adj : {&trace_->storage_parents, &trace_->storage_children})
      for (const StorageEdge* e = adj->begin(s); e != adj->end(s) && e->key < tensor_count_; ++e) f(e->storage);
  }

  // Appends a description of everything that decides the rest of a run
  // without a heuristic (program position, frames, defined tensors, material
  // storages), for memoization: two states with the same key complete the
  // same way under the same script policy.
  void AppendKey(std::string& key) const;

  // Throws SimrdAssertionError "TRACE:LINE: what (simrd stops with an assertion here)".
  [[noreturn]] void SimrdAssertion(const std::string& what) const;

 private:
  friend class EvictedRegions;
  StorageId storage(TensorId t) const { return trace_->tensors[t].storage; }
  bool v1() const { return runtime_ == RuntimeKind::kV1; }

  void CreateOutputs(OpId op);
  void StartFrame(TensorId t, bool remat);
  void FinishStep();
  void Get(TensorId t);
  void Release(TensorId t);
  void Pin(TensorId t);
  void Lock(StorageId s);
  void Unlock(StorageId s);
  void MakeEvictable(StorageId s);
  void MakeUnevictable(StorageId s);
  void ComputeTensor(TensorId t, bool remat);
  void Bottleneck(TensorId t);
  void NoteEagerEviction(StorageId s);
  void NoteScoreChange(StorageId s) {
    if (track_scores_ && !score_changed_[s]) {
      score_changed_[s] = 1;
      score_changes_.push_back(s);
    }
  }
  static void CheckedAdd(int64_t& total, int64_t x, const char* what, const Trace& trace);

  // RuntimeV1's banishing (checker/engine/engine_banishing.cc).
  void BanishingCreate(OpId op);
  void BanishingAfterCompute(TensorId t);
  void BanishingOnEvict(StorageId s);
  void TryBanish(StorageId s);

  const Trace* trace_;
  RuntimeKind runtime_;
  bool eager_;
  bool maintain_regions_;
  bool maintain_eq_;
  int64_t budget_;
  double remat_limit_;
  int64_t work_limit_;
  ReplayObserver* observer_;
  ReplayObserver* watcher_;

  int32_t step_ = 0;
  TensorId tensor_count_ = 0;
  bool at_point_ = false, done_ = false, thrashed_ = false, stop_requested_ = false;
  int64_t events_ = 0;
  int64_t decisions_ = 0;
  int64_t memory_ = 0;
  int64_t budget_lo_ = 0, budget_hi_ = kInfiniteBudget;
  RunResult result_;  // counters; outcome, distinct counts and interval filled by Result()

  std::vector<Frame> frames_;
  std::vector<TensorId> frame_args_;

  // Per tensor.
  std::vector<uint8_t> defined_;
  std::vector<int32_t> tensor_ref_;

  // Per storage.
  std::vector<uint8_t> material_, pinned_;
  std::vector<int32_t> ref_int_, ref_ext_;
  std::vector<int64_t> compute_, last_access_;
  std::vector<int32_t> storage_tensor_count_;
  std::vector<int32_t> pool_pos_;

  // The pool: slots in insertion order, -1 for removed entries.
  std::vector<StorageId> pool_;
  int32_t pool_live_ = 0;
  int64_t pool_epoch_ = 0;

  // Score changes since the last drain (see TrackScoreChanges), and the index.
  bool track_scores_ = false;
  std::vector<StorageId> score_changes_;
  std::vector<uint8_t> score_changed_;  // per storage: in score_changes_
  ScoreIndex score_index_;

  EvictedRegions regions_;
  std::vector<StorageId> walk_frontier_;  // scratch of WalkEvictedRegion()
  EquivalenceClasses eq_;

  // RuntimeV1 only: simrd's Tensor.children and Tensor.parents, which it
  // edits while banishing, and each storage's evicted dependents.
  struct Banishing {
    std::vector<std::vector<TensorId>> children, parents;        // per tensor
    std::vector<std::unordered_set<TensorId>> evicted_dependents;  // per storage
    std::vector<uint8_t> banished;                                 // per storage
  } banishing_;

  // Scratch of Compute(), empty between calls.
  std::vector<TensorId> siblings_;  // outputs rematerialized with the computed tensor
  std::vector<StorageId> remat_storages_;
};

// The computations the rest of the current program step makes if nothing is
// evicted meanwhile: what a copy of the engine, run on from its computation
// point until its frames are done, would compute (Engine::Advance's order),
// without copying the engine. Reuses its scratch across calls; one per thread.
class StepLookahead {
 public:
  // visit(tensor, event) for each computation from the engine's current one
  // on, in order. REQUIRES: engine.at_point(), a RuntimeV2 runtime.
  void ForEach(const Engine& engine, const std::function<void(TensorId, int64_t)>& visit);

 private:
  struct Frame {
    TensorId tensor;
    bool awaiting;
    int32_t begin, end, next;  // its undefined arguments: args_[begin, end)
  };
  std::vector<uint32_t> defined_at_;  // tensors defined by the lookahead: == stamp_
  uint32_t stamp_ = 0;
  std::vector<Frame> frames_;
  std::vector<TensorId> args_;
};

}  // namespace dtr
