// The schedule checker: replays a trace under a budget evicting exactly the
// storages of an eviction script at its events (and nothing else but the
// runtime's eager evictions), and says whether the run completes within the
// budget. Every "feasible" or "policy-induced" claim of dtrcheck rests on a
// script that passed here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "checker/engine/replay.h"
#include "checker/proofs/eviction_script.h"
#include "model/trace.h"

namespace dtr {

struct ScheduleCheck {
  int64_t budget = 0;
  // kPass: completed within the budget. kOom: an allocation did not fit
  // (run.oom and run.script_failure say where). kInvalidScript: an entry named
  // a storage that could not be evicted then (run.script_failure: entry, reason).
  Outcome outcome = Outcome::kPass;
  RunResult run;
  bool passed() const { return outcome == Outcome::kPass; }
};

// runtime: RuntimeV2EagerOptimized (the default, eager evictions) or another
// RuntimeV2 variant; RuntimeV1 is refused.
ScheduleCheck CheckSchedule(const Trace& trace, int64_t budget, const EvictionScript& script,
                            RuntimeKind runtime = RuntimeKind::kV2EagerOptimized,
                            ReplayObserver* observer = nullptr);

// Throws Error "WHAT needs a RuntimeV2 runtime, not RuntimeV1" for RuntimeV1:
// eviction scripts, and the frontier, searches and proofs built on them,
// replay on RuntimeV2 variants only. The one place that says so.
void RequireRuntimeV2(RuntimeKind runtime, std::string_view what);

// One line for people: "pass (peak 123 of budget 456 bytes)", "oom at event 17: ...",
// "invalid script: entry 3 (event 17): storage x5 is pinned".
std::string DescribeScheduleCheck(const ScheduleCheck& check);

}  // namespace dtr
