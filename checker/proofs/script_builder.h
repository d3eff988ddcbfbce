// Builds candidate eviction scripts on the replay engine: the runtime
// computes and rematerializes as DTR does, and a policy that knows the whole
// program chooses the evictions. Candidates prove nothing by themselves; the
// schedule checker decides (checker/proofs/schedule_checker.h).
//
// The policy, at each computation point:
//  - before `prefix_events`: the prefix script's entries, verbatim;
//  - inside a Z3 plan's window (checker/proofs/feasibility.h, PlanWindow; given, or
//    made on the way for rolling windows from the current state): evict
//    every storage the plan does not keep at this time point and that the
//    rest of the current recursion does not need;
//  - then, if the computation still does not fit: next-use order (Belady):
//    first the storages the program never uses again, then those whose next
//    use as an argument comes last; storages the pending recursion still
//    needs go last; larger first among equals.
#pragma once

#include <cstdint>
#include <string>

#include "checker/proofs/eviction_script.h"
#include "checker/proofs/feasibility.h"
#include "model/trace.h"

namespace dtr {

struct ScriptBuilderOptions {
  int64_t budget = 0;
  bool eager = true;
  const EvictionScript* prefix = nullptr;  // applied to events before prefix_events
  int64_t prefix_events = 0;
  const WindowPlan* plan = nullptr;  // a SAT plan, or null
  // Rolling plans: from the first computation of every `rolling_stride`-th
  // operator on, plan the next `rolling_ops` operators with Z3 from the
  // current state (PlanWindow) and follow that plan. 0: off.
  int32_t rolling_ops = 0;
  int32_t rolling_stride = 0;
  SolverLimits limits;
  int64_t max_events = 50'000'000;  // give up after this many computations
  // Stop (completed) at the first computation point of this program step or
  // later; -1: run to the end of the program.
  int32_t stop_at_step = -1;
};

struct BuiltScript {
  bool completed =
      false;  // ran to its end (or stop_at_step) within the budget, per the engine
  std::string stopped;  // why not, otherwise
  EvictionScript script;
  int64_t peak_memory = 0;
  int64_t events = 0;
  int32_t plans = 0;         // rolling plans made
  int32_t plans_failed = 0;  // rolling plans that were not SAT (next-use only there)
};

BuiltScript BuildScript(const Trace& trace, const ScriptBuilderOptions& options);

}  // namespace dtr
