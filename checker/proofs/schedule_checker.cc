#include "checker/proofs/schedule_checker.h"

#include <fmt/core.h>

#include "model/error.h"

namespace dtr {

void RequireRuntimeV2(RuntimeKind runtime, std::string_view what) {
  if (runtime == RuntimeKind::kV1)
    throw Error(fmt::format("{} needs a RuntimeV2 runtime, not RuntimeV1", what));
}

ScheduleCheck CheckSchedule(const Trace& trace, int64_t budget, const EvictionScript& script,
                            RuntimeKind runtime, ReplayObserver* observer) {
  RequireRuntimeV2(runtime, "the schedule checker");
  if (budget < 0) throw Error("the budget must not be negative");
  ReplayConfig config;
  config.runtime = runtime;
  config.budget = budget;
  config.script = &script.entries;
  config.observer = observer;
  ScheduleCheck check;
  check.budget = budget;
  check.run = Replay(trace, config);
  check.outcome = check.run.outcome;
  return check;
}

std::string DescribeScheduleCheck(const ScheduleCheck& check) {
  const RunResult& r = check.run;
  switch (check.outcome) {
    case Outcome::kPass:
      return fmt::format("pass (peak {} of budget {} bytes, {} computations)", r.max_memory,
                         check.budget, r.events);
    case Outcome::kOom:
      return fmt::format(
          "oom at event {}: {}", r.script_failure ? r.script_failure->event : 0,
          r.script_failure ? r.script_failure->reason : std::string("memory over the budget"));
    case Outcome::kInvalidScript:
      return fmt::format("invalid script: entry {} (event {}): {}", r.script_failure->entry,
                         r.script_failure->event, r.script_failure->reason);
    case Outcome::kThrash:
      return "thrash";
    case Outcome::kStopped:
      return fmt::format("stopped by its observer after {} computations", r.events);
  }
  return "?";
}

}  // namespace dtr
