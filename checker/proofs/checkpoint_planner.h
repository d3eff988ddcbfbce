// Checkpoint planning: low-memory eviction scripts that the DTR runtime can
// follow, built from a retention plan.
//
// The runtime rematerializes on demand and recursively, and every pending
// frame locks the arguments it has; an eviction script may only say which
// storages to drop at each computation point. A *retention plan* says which
// storages stay material between their uses; the follower
// (FollowRetentionPlan) drives the engine (checker/engine/engine.h) and, at every computation
// point, evicts every evictable storage that
//   - the rest of the current program step does not use (its pending
//     recursion, predicted by running a copy of the runtime without evictions;
//     evicting only such storages leaves that recursion unchanged), and
//   - the plan does not retain now: neither `keep_until[s]` has not passed nor
//     the storage's next use by the program lies within `horizon` steps.
// Everything else is dropped as early as the runtime allows, so memory holds
// the pinned storages, the retained ones, and the working set of the current
// step's recursion. The plan decides how deep recursions go: a storage that is
// not retained is recomputed from the nearest material ancestors when next
// needed, so the retained storages act as checkpoints.
//
// The plans (PlanByRecomputeCost) retain a storage when recomputing it at its
// last use would cost more than a fraction of the program's compute. With
// `stop_at_retained`, recomputation stops at retained storages that are still
// referenced then (so retained forward activations become checkpoints, at
// most that much compute apart, as in Chen et al.'s sqrt(n) checkpointing of a
// chain); without, it runs back to the constants (only storages far from the
// constants are retained: gradients, and whatever a backward pass builds from
// them). Small fractions retain more (less recomputation, more memory).
//
// A followed plan is a candidate only: its script is verified by the
// schedule checker (checker/proofs/schedule_checker.h) at its peak before anything
// is claimed (diagnose/schedule_search.h does that).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checker/engine/run_result.h"
#include "checker/proofs/eviction_script.h"
#include "model/trace.h"

namespace dtr {

inline constexpr int32_t kNoStep = std::numeric_limits<int32_t>::max();

// What the planners read about the program, computed once per trace.
class ProgramFacts {
 public:
  explicit ProgramFacts(const Trace& trace);

  // Program steps that use storage s (arguments of model computations, pins),
  // ascending, each once.
  const std::vector<int32_t>& uses(StorageId s) const { return uses_[s]; }
  // The first use at a step > `step`, or kNoStep.
  int32_t NextUseAfter(StorageId s, int32_t step) const;
  // The last step that uses s or any storage computed from it (directly or
  // not): after it, s is never needed again, not even to recompute another.
  // -1 if none.
  int32_t last_need(StorageId s) const { return last_need_[s]; }
  // The step whose RELEASE dropped the last reference to s for good, or
  // kNoStep if a reference remains to the end. Eager runtimes evict s there.
  int32_t release(StorageId s) const { return release_[s]; }
  int32_t last_use(StorageId s) const { return uses_[s].empty() ? -1 : uses_[s].back(); }
  // The step that first computes s (-1 if none does).
  int32_t created(StorageId s) const { return created_[s]; }
  int32_t steps() const { return steps_; }
  // The compute of the operator that creates storage s (its root tensor's).
  int64_t compute(StorageId s) const { return compute_[s]; }
  bool constant(StorageId s) const { return constant_[s] != 0; }
  int64_t total_compute() const { return total_compute_; }

 private:
  std::vector<std::vector<int32_t>> uses_;
  std::vector<int32_t> last_need_, release_, created_;
  int32_t steps_ = 0;
  std::vector<int64_t> compute_;
  std::vector<uint8_t> constant_;
  int64_t total_compute_ = 0;
};

// Program steps first..last (inclusive) of one storage where a plan's rule
// is overridden: retained or not, whatever keep_until and the horizon say.
struct RetentionOverride {
  int32_t first = 0, last = 0;
  bool retain = false;
};

struct RetentionPlan {
  // Per storage: retained (when material) at computation points of program
  // steps <= keep_until[s]; -1: never by this rule.
  std::vector<int32_t> keep_until;
  // Also retained while its next use by the program is at most this many
  // program steps ahead (0: only the rest of the current step).
  int32_t horizon = 0;
  // Per storage (empty, or one entry per storage): disjoint overrides sorted
  // by step, made by a local search (diagnose/schedule_search.h).
  std::vector<std::vector<RetentionOverride>> overrides;
  std::string description;  // for people: the rule and its parameters

  // Overrides steps first..last of s (older overrides there are cut away).
  void Override(StorageId s, int32_t first, int32_t last, bool retain);
  size_t override_count() const;
};

// Every storage dropped as early as possible, none retained (but see horizon).
RetentionPlan PlanRetainingNothing(const Trace& trace, int32_t horizon = 0);

// The recompute-cost rule: retains storage s from its computation while s,
// or a storage that may have to be recomputed from it, is still to be used,
// when recomputing s at its last use would cost more than
// fraction * total compute. Recomputation is traced back through the
// storages that created it; it stops at constants and, with
// stop_at_retained, at retained storages not yet released then. Decided in
// storage order (parents before children), so each decision sees the final
// decisions of its ancestors.
struct CostRule {
  double fraction = 0.1;
  bool stop_at_retained = true;
  int32_t horizon = 0;  // RetentionPlan::horizon
  // tilt != 0 scales the threshold with where s is first computed: by
  // max(0.05, 1 + tilt * (1/2 - step / program steps)). A positive tilt puts
  // retained storages closer together late in the program: in a backward
  // pass the checkpoints of the late forward segments are recomputed from
  // first, while every earlier checkpoint is still held, so shorter segments
  // there even out memory (the idea behind Griewank's revolve schedules).
  double tilt = 0;
  // Storages of at most this many bytes are retained whatever their cost
  // (cheap to hold; recomputing them can start long recursions). -1: none.
  int64_t small_bytes = -1;
  // Retain to last_need(s) (the last use of any storage computed from s),
  // not only while a storage that may be recomputed from s is still used.
  bool to_last_need = false;
  // hold_bytes > 0 scales the threshold by max(0.05, 1 - H / hold_bytes),
  // where H is the bytes of the storages retained so far that are still
  // needed when s is computed. In a chain's backward pass, a segment is
  // recomputed while every checkpoint before it is still held: the more
  // are held, the shorter the segment should be (its recursion locks a
  // frame's arguments per step), so that checkpoints and locks together stay
  // under about hold_bytes (the schedules of Griewank's revolve, one level).
  int64_t hold_bytes = 0;
};
RetentionPlan PlanByRecomputeCost(const Trace& trace, const ProgramFacts& facts,
                                  const CostRule& rule);

struct FollowOptions {
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;  // a RuntimeV2 runtime
  bool record_steps = false;                             // fill FollowedPlan::step_peaks
  int64_t max_events = 20'000'000;                       // give up after this many computations
  // Stop (not completed) as soon as memory + request exceeds this.
  int64_t budget = std::numeric_limits<int64_t>::max();
  std::optional<std::chrono::steady_clock::time_point> deadline;  // give up after it
  // Keep about this many states to go on from (FollowedPlan::snapshots),
  // one at the start of every program.size() / snapshots steps (0: none).
  int32_t snapshots = 0;
};

// A follower's state at the first computation point of a program step
// (defined in checkpoint_planner.cc).
struct FollowSnapshot;

// Where memory peaked while following a plan, for people.
struct PeakState {
  int64_t event = -1;
  int32_t program_step = -1;
  TensorId tensor = -1;  // being computed (the innermost pending frame)
  int32_t frames = 0;    // pending materializations, the program operator's included
  int64_t request = 0;
  int64_t pinned = 0;    // material pinned storages
  int64_t locked = 0;    // material, unpinned, locked by pending frames
  int64_t needed = 0;    // unlocked, used later by the same program step
  int64_t retained = 0;  // the rest: retained by the plan
};

struct FollowedPlan {
  bool completed = false;
  std::string stopped;  // why not
  EvictionScript script;
  int64_t peak_memory = 0;  // of memory + request at computation points
  int64_t events = 0;
  int64_t compute = 0;  // of every computation made (model and remat)
  PeakState peak;
  // At the peak, for a local search: the storages the plan retained there,
  // and the storages being recomputed there (pending frames, or recomputed by
  // this program step and still locked or needed) with the program step
  // where the plan last dropped them.
  std::vector<StorageId> retained_at_peak;
  std::vector<std::pair<StorageId, int32_t>> recomputed_at_peak;
  // With record_steps: per program step, the most memory + request of its
  // computation points (0 where it has none).
  std::vector<int64_t> step_peaks;
  // With FollowOptions::snapshots: states to go on from, ascending by step.
  std::vector<std::shared_ptr<const FollowSnapshot>> snapshots;
  // Computations before the state a ResumeRetentionPlan went on from (0:
  // followed from the start): events - resumed_at were followed.
  int64_t resumed_at = 0;
};

// REQUIRES: plan.keep_until has one entry per storage.
FollowedPlan FollowRetentionPlan(const Trace& trace, const ProgramFacts& facts,
                                 const RetentionPlan& plan, const FollowOptions& options = {});

// Exactly FollowRetentionPlan(trace, facts, plan, options), going on from
// the last of base.snapshots at a step <= `first` (from the start if there
// is none) instead of following the steps before it again. REQUIRES: base
// is a completed follow (with the same trace, facts, runtime and
// record_steps) of a plan that `plan` equals except in the overrides of
// storage `moved` at steps >= `first`. Before `first` the two plans retain
// the same storages at the same steps, so the two runs are the same up to
// there but for when the follower next looks at `moved` (see the .cc).
FollowedPlan ResumeRetentionPlan(const Trace& trace, const ProgramFacts& facts,
                                 const RetentionPlan& plan, const FollowedPlan& base,
                                 StorageId moved, int32_t first, const FollowOptions& options = {});

// The computations before the state ResumeRetentionPlan(..., base, ..., first, ...)
// goes on from (0: it follows from the start).
int64_t ResumePoint(const FollowedPlan& base, int32_t first);

}  // namespace dtr
