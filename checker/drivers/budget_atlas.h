// The exact budget atlas: every budget of a byte range, grouped into the
// maximal intervals on which the replay is identical, found without sampling.
//
// A replay depends on the budget only through comparisons
// `memory_in_use + request > budget`, and the engine narrows
// RunResult::budget_lo/budget_hi at each one, so a replay at B names the
// interval [budget_lo, budget_hi] of budgets that give exactly that run (every
// decision, the outcome, every counter). The atlas replays at the range start,
// clips that interval to the range, replays again at its end + 1, and so on:
// the intervals cover the range with no gap and no overlap, and two adjacent
// intervals are two different runs (some comparison flipped between them).
//
// A flipped comparison need not change anything the atlas shows (an eviction
// can move to a later decision and end the same way), so adjacent intervals can
// look alike. They are kept apart; `bands` is the second view that merges
// neighbours with the same visible behaviour (AtlasBehaviour).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "checker/drivers/sweep.h"

namespace dtr {

// What the atlas shows of a run; two intervals with equal behaviour are
// "visibly identical" (their decision sequences may still differ).
struct AtlasBehaviour {
  Outcome outcome = Outcome::kPass;
  int64_t clock = 0;
  int64_t heuristic_evictions = 0;
  int64_t evictions = 0;  // heuristic and eager
  int32_t distinct_evicted = 0;

  bool operator==(const AtlasBehaviour&) const = default;
  auto operator<=>(const AtlasBehaviour&) const = default;
};

struct AtlasInterval {
  int64_t lo = 0, hi = 0;          // budgets in bytes, inclusive, clipped to the atlas range
  int64_t run_lo = 0, run_hi = 0;  // the run's own interval (RunResult::budget_lo/hi), unclipped
  AtlasBehaviour behaviour;
  double overhead = 0;  // clock / baseline compute
  int64_t remat_compute = 0;
  int64_t heuristic_evals = 0;
  int32_t distinct_heuristic_evicted = 0;
  // evictions / distinct_evicted (0 when nothing was evicted): how often an
  // evicted storage is evicted again; high in a thrashing regime.
  double evictions_per_evicted = 0;

  int64_t width() const { return hi - lo + 1; }
  bool feasible() const { return behaviour.outcome == Outcome::kPass; }
};

// A maximal run of adjacent infeasible (oom or thrash) intervals with a
// feasible interval right below and right above it inside the atlas range.
struct FeasibilityHole {
  int64_t lo = 0, hi = 0;  // bytes, inclusive
  size_t first = 0, last = 0;  // interval indices, inclusive
  bool has_oom = false, has_thrash = false;
  int64_t width() const { return hi - lo + 1; }
};

// A maximal run of adjacent intervals with the same AtlasBehaviour.
struct AtlasBand {
  int64_t lo = 0, hi = 0;
  size_t first = 0, last = 0;  // interval indices, inclusive
  int64_t width() const { return hi - lo + 1; }
};

struct AtlasSummary {
  size_t intervals = 0;
  size_t distinct_behaviours = 0;  // distinct AtlasBehaviour values over all intervals
  size_t distinct_overheads = 0;   // distinct (outcome, clock) pairs
  int64_t feasible_width = 0;      // bytes of budgets that pass
  int64_t infeasible_width = 0;    // bytes of budgets that oom or thrash
  std::vector<FeasibilityHole> holes;
  std::vector<AtlasBand> bands;
  std::optional<int64_t> smallest_feasible;    // in the range; the run may pass below it too
  std::optional<int64_t> largest_oom;          // in the range
  std::optional<int64_t> largest_infeasible;   // oom or thrash, in the range
};

// A cap on an atlas walk, counted in budget order (the replays one worker
// walking up from lo would make, and their heuristic evaluations), so that
// where it stops is the same for any number of workers and any timing: the
// walk stops after the first interval at which either count reaches its cap.
// Evaluations measure a replay's cost (a replay near a regime change can cost
// a hundred times one far from it); 0: no cap of that kind.
struct AtlasCap {
  size_t runs = 0;
  int64_t evals = 0;
  bool any() const { return runs > 0 || evals > 0; }
  // Whether `r` replays and `e` evaluations have reached the cap.
  bool Reached(size_t r, int64_t e) const {
    return (runs > 0 && r >= runs) || (evals > 0 && e >= evals);
  }
  // The larger share of the cap that `r` replays and `e` evaluations spent
  // (0 without a cap; may pass 1), for progress lines.
  double Spent(size_t r, int64_t e) const {
    double part = runs > 0 ? static_cast<double>(r) / static_cast<double>(runs) : 0;
    if (evals > 0) part = std::max(part, static_cast<double>(e) / static_cast<double>(evals));
    return part;
  }
};
// The default cap of the `atlas` command's walk: at most about 30 s of two
// cores here (14 to 21 million evaluations a CPU second on the public
// traces' slow runs, down to 10 million a second of two cores on
// DenseNet-121's many quick ones; docs/default_times.md).
inline constexpr int64_t kDefaultAtlasEvals = 300'000'000;

struct BudgetAtlas {
  int64_t lo = 0, hi = 0;  // the range, bytes, inclusive
  std::vector<AtlasInterval> intervals;  // sorted, covering [lo, hi] exactly
  AtlasSummary summary;
  // The replays one worker walking up from lo needs, resumed intervals
  // included: intervals.size() for a complete atlas, prefix.size() for a
  // stopped one. Parallel workers replay a run twice where their parts meet;
  // those seam replays are not counted, so `runs` is the same for any `jobs`.
  size_t runs = 0;
  // The heuristic evaluations of those replays (RunResult::heuristic_evals),
  // counted the same way.
  int64_t evals = 0;
  size_t resumed = 0;  // intervals taken from AtlasJournal::finished
  // BuildAtlas was given a cap (AtlasCap) that the range needs more than:
  // `intervals` and `summary` are empty; `covered` bytes from lo are those of
  // the intervals walked within the cap (else the whole range).
  bool stopped = false;
  int64_t covered = 0;
  // When stopped: those intervals, covering exactly [lo, lo + covered - 1]
  // (the last one reaches as far as its run does inside the range). The same
  // for every `jobs`. Empty otherwise.
  std::vector<AtlasInterval> prefix;
  AtlasCap cap;  // the cap the walk was given
  // Set by WalkedPart: the range asked for ended here; [lo, hi] is the part
  // walked within the cap.
  std::optional<int64_t> asked_hi;
};

// A stopped atlas as the complete atlas of the part it walked: intervals =
// prefix, hi = lo + covered - 1, its summary, asked_hi = the range's end.
// Any other atlas is returned as it is.
BudgetAtlas WalkedPart(BudgetAtlas atlas);

// Lets a walk continue an earlier, interrupted walk of the same range and
// record its own progress (checker/persist/atlas_checkpoint.h keeps it in a file, docs/checkpoint.md).
struct AtlasJournal {
  // Intervals an earlier walk finished, in any order: each inside the range,
  // no two overlapping, each as BuildAtlas recorded it (clipped to the part
  // of the range its walk covered). The walk replays only the rest.
  std::vector<AtlasInterval> finished;
  // Called once per newly recorded interval, serialized (under the walk's
  // lock: keep it short). Under MPI, on rank 0 only: as each interval is
  // found by rank 0's own worker, and for a part walked on another rank,
  // when the part arrives.
  std::function<void(const AtlasInterval&)> record;
};

// Called with (bytes covered so far, bytes in the range, runs so far, their
// heuristic evaluations), from worker threads, serialized (under MPI, on rank
// 0, as journal->record).
using AtlasProgressFn = std::function<void(int64_t, int64_t, size_t, int64_t)>;

// Walks [lo_bytes, hi_bytes] exactly. `spec` gives heuristic, runtime,
// overhead limit and seed; its ratio and budget are ignored. With jobs > 1
// (or the ranks of an MPI job, checker/farm/mpi_farm.h), the range is cut into
// parts walked in parallel (checker/drivers/atlas_walk.h) and merged in budget order:
// the result (intervals, runs, stopped, covered) is the same for every `jobs`,
// every number of ranks and every timing. jobs <= 0: one per hardware
// thread. With a cap (resumed intervals count towards it), a range that
// needs more than the cap gives an atlas with `stopped` set, without walking
// the rest.
// With a journal, the walk starts from journal->finished and reports each new
// interval to journal->record; the result equals that of an uninterrupted walk.
// Throws Error for an empty or negative range, finished intervals outside it
// or overlapping, or what Replay throws.
BudgetAtlas BuildAtlas(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                       int64_t lo_bytes, int64_t hi_bytes, int jobs = 1,
                       const AtlasProgressFn& progress = nullptr, AtlasCap cap = {},
                       const AtlasJournal* journal = nullptr);

// Recomputes the summary of a sorted, gap-free interval list.
AtlasSummary SummarizeAtlas(const std::vector<AtlasInterval>& intervals);

}  // namespace dtr
