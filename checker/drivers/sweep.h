// Many replays of one trace: the baseline once, then one run per (heuristic,
// budget) point, spread over worker threads or MPI ranks (checker/farm/parallel.h).
// Results come back in input order, the same for any number of workers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "checker/drivers/budget_choice.h"
#include "checker/drivers/decision_trail.h"
#include "checker/drivers/ratio_grid.h"
#include "checker/engine/replay.h"
#include "checker/engine/replay_settings.h"

namespace dtr {

struct RunSpec : ReplaySettings, BudgetChoice {
  // Decision index -> storage to evict instead (ReplayConfig::overrides).
  std::vector<std::pair<int64_t, StorageId>> overrides;
};

// A run with `settings` and no budget yet.
inline RunSpec RunSpecOf(const ReplaySettings& settings) {
  RunSpec s;
  static_cast<ReplaySettings&>(s) = settings;
  return s;
}

struct RunRecord {
  RunSpec spec;
  RunResult result;
  double overhead = 0;  // clock / baseline compute
  // The run's decisions, when RunMany was asked to keep them (its
  // trail_decisions) and the run made no more; shared by the points that
  // took this run's result.
  std::shared_ptr<const RunTrail> trail;
};

// Called after each finished run with (done, total); from worker threads, serialized.
using ProgressFn = std::function<void(size_t, size_t)>;

// Sees the runs RunMany replays in this process as they go (a progress
// display): Begin(point, specs[point]) before the replay of specs[point]
// starts returns its watcher (ReplayConfig::watcher; null: none),
// End(point) after it ends (or throws). From worker threads, several runs
// at once.
class RunWatch {
 public:
  virtual ~RunWatch() = default;
  virtual ReplayObserver* Begin(size_t point, const RunSpec& spec) = 0;
  virtual void End(size_t point) = 0;
};

// One finished point of a grid: the heuristic and the result (whose budget
// is the point's budget in bytes).
struct GridPointResult {
  std::string heuristic;
  RunResult result;
};

// Lets RunMany continue an earlier, interrupted run of a grid and record its
// own progress (checker/persist/grid_checkpoint.h keeps it in a file). For grids
// whose specs differ only in heuristic and budget (runtime, overhead limit
// and seed are the file header's): a point is known by (heuristic, budget).
struct GridJournal {
  // Points an earlier run finished, in any order. A spec with a finished
  // point is not replayed; its record is built from the finished result.
  std::vector<GridPointResult> finished;
  // Called once per newly replayed point, serialized (keep it short). Under
  // MPI, on rank 0 only: as rank 0's own replays finish, and for a replay on
  // another rank, when its result arrives. Not called again for specs that
  // repeat a point.
  std::function<void(const GridPointResult&)> record;
};

ReplayConfig ConfigFor(const RunSpec& spec, const Baseline& baseline);
// What a run is besides its budget: heuristic, runtime, limits, seed. Runs
// with equal keys decide alike until a budget comparison comes out
// differently. nullopt for a configuration whose decisions come from more
// than its heuristic and budget (an observer, a script, overrides) or that
// has no heuristic.
using RunKey = std::tuple<const HeuristicSpec*, RuntimeKind, double, uint64_t, int64_t>;
std::optional<RunKey> KeyBesidesBudget(const ReplayConfig& config);
// The record of spec's run, given its result (the overhead from the baseline).
RunRecord RecordOf(const RunSpec& spec, const Baseline& baseline, RunResult result);
RunRecord RunOne(const Trace& trace, const Baseline& baseline, const RunSpec& spec);
// jobs <= 0 means one per hardware thread (WorkerCount). With a journal
// (see above), replays only the points it has not finished, each once, and
// returns what an uninterrupted run returns; progress then counts the
// finished points as done from the start (progress is called once before
// the first replay, with the total). A point whose budget lies in the
// [budget_lo, budget_hi] of a run already made here with the same heuristic,
// runtime, limit and seed (no overrides) takes that run's result with its
// own budget instead of replaying: the same run (RunResult::budget_lo).
// With trail_decisions > 0, each run replayed in this process that makes at
// most that many decisions keeps its trail (RunRecord::trail, 24 bytes a
// decision), so that runs can be compared later without replaying them
// (CompareRuns); a point taken from a journal has none. `watch` (may be
// null) sees each replay made in this process.
std::vector<RunRecord> RunMany(const Trace& trace, const Baseline& baseline,
                               const std::vector<RunSpec>& specs, int jobs,
                               const ProgressFn& progress = nullptr,
                               const GridJournal* journal = nullptr, int64_t trail_decisions = 0,
                               RunWatch* watch = nullptr);
// Points RunMany() took from a run covering their budget instead of
// replaying, since the process started (for tests and benchmarks).
int64_t RunsReused();

}  // namespace dtr
