// A plain second implementation of the replay's script mode (the RuntimeV2
// family without a heuristic: on-demand recursive rematerialization, eager
// evictions optionally), driven one computation at a time, with a state that
// can be copied. Exhaustive search and script builders use it to try eviction
// choices; every script they produce is still verified by the engine
// (checker/schedule_checker.h), and tests check that both agree.
//
// A computation point is the moment of the engine's budget check: the frames
// of the computation have started, its arguments are locked, and the outputs
// are not allocated yet. A script's evictions for event k happen there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checker/eviction_script.h"
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

// The state of a scripted run at the computation point of `event`, after the
// script's first `entries` entries (those of earlier events and, at `event`
// itself, the ones among the first `entries`) were applied. Throws Error if
// the run ends, or an entry cannot be applied, before that point. Memory is
// not checked against any budget on the way.
StepwiseRuntime StateAtEvent(const Trace& trace, bool eager, const EvictionScript& script,
                             size_t entries, int64_t event);

}  // namespace dtr
