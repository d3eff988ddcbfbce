// A plain second implementation of the replay's script mode (the RuntimeV2
// family without a heuristic: on-demand recursive rematerialization, eager
// evictions optionally), driven one computation at a time, with a state that
// can be copied.
//
// Why it exists beside the engine (checker/replay.h). The engine runs a trace
// to its end in one call; part of its state lives on the C++ stack (the
// recursion of simrd's _materialize(): which arguments each pending frame has
// locked so far), and the rest is built for heuristics (pool order, regions,
// equivalence classes, RuntimeV1's banishing). Its users need a state they can
// stop at, inspect, change and copy:
//  - exhaustive search (checker/exhaustive_search.h) branches at every
//    computation point: it copies the state, tries each subset of evictions,
//    and memoizes dead states by AppendKey();
//  - the script builder (checker/script_builder.h) lets an offline policy
//    evict at any computation point, over budget or not, and runs a copy on
//    without evictions to see what the pending recursion still needs;
//  - the remat frontier (diagnose/remat_frontier.h) reads each frame's locked
//    and missing arguments, and predicts the rest of the recursion the same
//    way; the witness search (diagnose/schedule_witness.cc) takes the
//    material set of a run at a program step as a Z3 plan's entry state.
// A read-only engine hook at decisions and OOMs (tried once, see git history
// of checker/replay.h) serves none of these fully; making the engine
// copyable and steppable would restructure it. So this runtime stays small
// instead: no clock, heuristic, pool order or RuntimeV1.
//
// What it shares with the engine: the Trace (ops, tensors, storages,
// program) and the script-mode semantics of RuntimeV2 / RuntimeV2Eager and
// their Optimized variants (which only add heuristic state): frames start in
// the same order; a frame locks its defined arguments first, then
// materializes and locks the undefined ones in argument order (one a sibling
// defined meanwhile is only locked); a computation frees the copies of
// outputs that were still defined; the last release of an unpinned material
// storage evicts it eagerly; final pins rematerialize first. Events count
// computations as the engine does, so scripts are interchangeable. Nothing it
// concludes is trusted alone: scripts are verified by the engine
// (checker/schedule_checker.h), the frontier checks its rebuilt OOM state
// against the run's, and tests/stepwise_runtime_test.cc compares both
// runtimes computation by computation on random traces and scripts, and the
// states rebuilt at every decision and OOM of heuristic runs.
//
// A computation point is the moment of the engine's budget check: the frames
// of the computation have started, its arguments are locked, and the outputs
// are not allocated yet. A script's evictions for event k happen there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checker/eviction_script.h"
#include "checker/replay.h"
#include "model/trace.h"

namespace dtr {

class StepwiseRuntime {
 public:
  // A pending materialization (simrd: one _materialize() call on the stack).
  struct Frame {
    TensorId tensor = 0;
    bool remat = false;
    std::vector<TensorId> undefined_args;  // arguments undefined when the frame started, in order
    int32_t next = 0;                      // undefined_args before it are materialized and locked
    bool awaiting = false;  // undefined_args[next] is being materialized by the frame above
  };

  // trace must outlive the runtime.
  explicit StepwiseRuntime(const Trace& trace, bool eager = true);

  // Runs the program up to the next computation point; false when the program
  // is done. Throws Error where simrd stops with an assertion.
  bool Advance();

  // At a computation point:
  TensorId tensor() const { return frames_.back().tensor; }
  int64_t request() const;  // the operator's total output size
  int64_t event() const { return events_; }
  bool Evictable(StorageId s) const { return material_[s] && !pinned_[s] && locks_[s] == 0; }
  void Evict(StorageId s);  // REQUIRES: Evictable(s)
  // Allocates the request and computes, without a budget check, then
  // unlocks the arguments and ends the frame.
  void Compute();

  int32_t program_step() const { return step_; }
  int64_t memory() const { return memory_; }
  int64_t peak_memory() const { return peak_; }
  bool material(StorageId s) const { return material_[s]; }
  bool pinned(StorageId s) const { return pinned_[s]; }
  int32_t locks(StorageId s) const { return locks_[s]; }
  bool defined(TensorId t) const { return defined_[t]; }
  const std::vector<Frame>& frames() const { return frames_; }
  const Trace& trace() const { return *trace_; }

  // Appends a description of everything that decides the rest of the run
  // (program position, frames, defined tensors, material storages), for
  // memoization: two states with the same key complete the same way.
  void AppendKey(std::string& key) const;

 private:
  StorageId storage(TensorId t) const { return trace_->tensors[t].storage; }
  void StartFrame(TensorId t, bool remat);
  void Lock(StorageId s) { ++locks_[s]; }
  void Pin(TensorId t);

  const Trace* trace_;
  bool eager_;
  int32_t step_ = 0;
  bool at_computation_ = false;
  int64_t events_ = 0;
  int64_t memory_ = 0, peak_ = 0;
  std::vector<Frame> frames_;
  std::vector<uint8_t> defined_;                // per tensor
  std::vector<uint8_t> material_, pinned_;      // per storage
  std::vector<int32_t> locks_, external_refs_;  // per storage
};

// The `eager` flag that matches an engine runtime of the RuntimeV2 family.
bool EagerEvictions(RuntimeKind runtime);

// The state of a scripted run at the computation point of `event`, after the
// script's first `entries` entries (those of earlier events and, at `event`
// itself, the ones among the first `entries`) were applied. Throws Error if
// the run ends, or an entry cannot be applied, before that point. Memory is
// not checked against any budget on the way.
StepwiseRuntime StateAtEvent(const Trace& trace, bool eager, const EvictionScript& script,
                             size_t entries, int64_t event);

// The state of a scripted run at the first computation point of program
// step `step` or later, with the script's entries of earlier events applied
// (none of that event's); the state at the end if the run ends first. Throws
// Error if an entry cannot be applied on the way.
StepwiseRuntime StateBeforeStep(const Trace& trace, bool eager, const EvictionScript& script,
                                int32_t step);

}  // namespace dtr
