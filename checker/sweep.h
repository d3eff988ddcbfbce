// Many replays of one trace: the baseline once, then one run per (heuristic,
// budget) point, spread over worker threads or MPI ranks (checker/parallel.h).
// Results come back in input order, the same for any number of workers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checker/ratio_grid.h"
#include "checker/replay.h"

namespace dtr {

struct RunSpec {
  const HeuristicSpec* heuristic = nullptr;
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  std::optional<Ratio> ratio;     // the budget is int(baseline_memory * ratio) ...
  std::optional<int64_t> budget;  // ... unless given in bytes
  std::optional<double> overhead_limit;
  uint64_t seed = 0;
  // Decision index -> storage to evict instead (ReplayConfig::overrides).
  std::vector<std::pair<int64_t, StorageId>> overrides;
};

struct RunRecord {
  RunSpec spec;
  RunResult result;
  double overhead = 0;  // clock / baseline compute
};

// Called after each finished run with (done, total); from worker threads, serialized.
using ProgressFn = std::function<void(size_t, size_t)>;

ReplayConfig ConfigFor(const RunSpec& spec, const Baseline& baseline);
RunRecord RunOne(const Trace& trace, const Baseline& baseline, const RunSpec& spec);
// jobs <= 0 means one per hardware thread (WorkerCount).
std::vector<RunRecord> RunMany(const Trace& trace, const Baseline& baseline, const std::vector<RunSpec>& specs,
                               int jobs, const ProgressFn& progress = nullptr);

}  // namespace dtr
