// The settings of a replay apart from its budget: heuristic, runtime,
// overhead limit and seed. Every command that replays shares them, so they
// are one type: a run (RunSpec), a scan (ScanOptions) and a report
// (ReportOptions) hold them as a base and pass them on whole, never field by
// field. Callers name them as text (api/replay_choice.h resolves and
// validates the names once).
#pragma once

#include <cstdint>
#include <optional>

#include "checker/engine/heuristic.h"
#include "checker/engine/run_result.h"

namespace dtr {

struct ReplaySettings {
  const HeuristicSpec* heuristic = nullptr;
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  // A run ends as "thrash" once remat compute exceeds baseline compute *
  // (limit - 1); none: no limit.
  std::optional<double> overhead_limit;
  uint64_t seed = 0;  // RandomStorage / AbRandom
  // A run ends as "stopped" once its heuristic evaluations plus computations
  // exceed it (EngineOptions::work_limit); none: no limit. A stopped run
  // says nothing about the budget: callers count it as unknown.
  std::optional<int64_t> work_limit;
};

}  // namespace dtr
