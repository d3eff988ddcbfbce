// Which modules of a captured PyTorch step to wrap in torch.utils.checkpoint
// so that the step fits a budget (issue 52, item 5): a search over module
// boundaries of a trace with MODULE and PHASE keys (docs/trace_format.md,
// "Attribution keys"), each set of modules simulated on the trace.
//
// Checkpointing module M is simulated as an eviction script: every
// material, unpinned storage made by M's forward operators that the backward
// reads and no forward operator outside M reads (M's internal activations
// saved for the backward; its outputs stay) is
// evicted right after the last forward operator that reads it (the one that
// made it, if none does), as torch frees it when the checkpointed forward is
// done with it; the backward then
// rematerializes them on demand, as the runtime always does. DTR's recursive
// rematerialization stands for torch recomputing the module's forward, and
// what it brings back is evicted again once nothing needs it (no name, no
// operator to come, no lock), as torch frees recomputed tensors. The
// script is replayed by the schedule checker (checker/proofs/schedule_checker.h) on
// RuntimeV2EagerOptimized with no budget limit: its peak is the predicted
// peak, its clock over the baseline compute the predicted overhead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checker/engine/replay.h"
#include "checker/proofs/eviction_script.h"
#include "model/trace.h"

namespace dtr {

// A module torch.utils.checkpoint can wrap: a non-empty MODULE path whose
// forward operators (those whose path is it or starts with it + ".") form
// one contiguous run of the trace's forward operators, and, when the trace
// records module calls (ENTER keys), a module called once, that run's call.
struct CheckpointCandidate {
  std::string module;
  OpId first_op = 0, last_op = 0;  // its first and last forward operators
  int32_t forward_ops = 0;
  int64_t forward_compute = 0;  // the TIME of its forward operators: what torch recomputes
  // Storages made by its forward operators that an operator after the
  // forward reads and no forward operator outside it reads, in id order:
  // what checkpointing it evicts (if material then).
  std::vector<StorageId> internal;
  // Per internal storage, the program step after which the forward no longer
  // reads it (its last forward reader's, or its maker's): torch frees it
  // there, keeping only the region's inputs for the backward.
  std::vector<int32_t> internal_free_step;
};

// The candidates of a captured trace, in program order (an ancestor before
// its descendants). Throws Error (usage) if the trace has no attribution
// keys or no forward operator with a module.
std::vector<CheckpointCandidate> CheckpointCandidates(const Trace& trace);

// One simulated set of checkpointed modules.
struct CheckpointSimulation {
  EvictionScript script;      // what the schedule checker replayed
  std::vector<int64_t> freed;  // per module given: the bytes its checkpoint evicted
  int64_t peak = 0;           // the checked run's max memory
  int64_t clock = 0;          // the checked run's clock
};
// Simulates checkpointing `chosen` (indices into `candidates`, disjoint:
// none inside another). Throws Error if the checker does not pass
// the script (it cannot, but it is what the prediction rests on).
CheckpointSimulation SimulateCheckpoints(const Trace& trace,
                                         const std::vector<CheckpointCandidate>& candidates,
                                         const std::vector<int32_t>& chosen);

struct PlannedModule {
  std::string module;
  int32_t forward_ops = 0;
  int64_t bytes_freed = 0;  // evicted by its checkpoint in the final plan's run
  int64_t forward_compute = 0;  // the TIME of its forward operators: what torch recomputes
};

enum class PlanVerdict {
  kFits,         // the plan's predicted peak is at or under the budget
  kBelowFloor,   // the budget is below the static floor: no schedule fits
  kBestReached,  // no module left lowers the predicted peak; the best is over the budget
};

struct CheckpointPlan {
  int64_t budget = 0;
  Baseline baseline;               // simrd's baseline (RuntimeV1, no budget)
  int64_t floor = 0;               // checker/proofs/memory_bound.h: no schedule fits below it
  int64_t final_pinned = 0;        // the storages pinned at the end (part of the floor)
  int64_t unplanned_peak = 0;      // the simulation with no module checkpointed
  int64_t unplanned_clock = 0;
  int32_t candidates = 0;
  std::vector<PlannedModule> modules;  // in program order
  int64_t predicted_peak = 0;
  // (baseline.compute + every planned module's forward_compute) /
  // baseline.compute: torch recomputes each module's whole forward once.
  double predicted_overhead = 0;
  // The simulation's clock and its overhead: recomputing on demand only what
  // the backward reads, sometimes more than once.
  int64_t simulated_clock = 0;
  double simulated_overhead = 0;
  PlanVerdict verdict = PlanVerdict::kFits;
  // kBestReached: the program operator at whose computation the plan's run
  // first reaches its peak ("NAME/ID"), and what is in use there before its
  // request (pinned: parameters, gradients and the like).
  std::string peak_op;
  int64_t peak_in_use = 0, peak_pinned = 0, peak_request = 0;
  EvictionScript script;  // the final plan's script (docs/eviction_script.md)
};

// Greedy search, twice: from no module, repeatedly adds a candidate that is
// not inside a chosen one (one around chosen ones replaces them) and lowers
// the predicted peak. The first rule takes one that reaches `budget` with
// the least added forward compute to redo if any does, else the one that
// lowers the peak the most per unit of it (a candidate adding none counts as
// adding 1); the second always the latter. Ties: fewer forward operators,
// then program order. Each stops when the predicted peak is at or under
// `budget` or no candidate lowers it; the plan is the one that fits with
// less to recompute (the first on a tie), else the lower peak.
// Deterministic. Throws Error as CheckpointCandidates does.
CheckpointPlan PlanCheckpoints(const Trace& trace, int64_t budget);

// "fits", "below-floor", "best-reached"
const char* PlanVerdictName(PlanVerdict v);

}  // namespace dtr
