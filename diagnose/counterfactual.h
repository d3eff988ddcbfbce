// Counterfactual blame: which of a run's eviction decisions, taken
// differently, change its outcome. The run is replayed with decisions
// overridden (ReplayConfig::overrides: decision i evicts another storage of
// the pool), searching for the smallest set of overrides that reaches the
// goal:
//  - an OOM (or thrashing) run: pass;
//  - a passing run compared with a faster run A (--against): pass with an
//    overhead at most A's overhead times `regime_factor` (A's regime);
//  - a passing run alone: pass with an overhead at most its own divided by
//    `regime_factor`.
//
// Search. Single overrides first: decisions are tried in priority order,
// round-robin over these sequences: the decisions from the first divergence
// from A forward (with --against); for a failed run, the decisions that last
// evicted the storages of the OOM's pending rematerializations (innermost
// first: the evictions the failing recursion had to undo); the decisions
// before the end backward; for a passing run without A, the decisions from
// the start forward. Each decision gets up to `candidates_per_decision`
// storages that were certainly in the pool then: the runner-up, then the
// storages the same eviction loop chose next. Then pairs: the singles that
// got closest to the goal (furthest event before the OOM, or lowest overhead)
// are extended by one more override searched the same way in their own run.
// Candidates are replayed in fixed batches, so the result does not depend on
// the number of threads. Every fix is verified by a fresh replay that checks
// each override was taken where the search put it.
//
// Memory: 24 bytes per decision of the blamed run and of each pair base
// (where it was, what it chose, the runner-up); the search order is made as
// it is consumed.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "checker/drivers/sweep.h"
#include "diagnose/divergence.h"

namespace dtr {

// The candidate replays' cost in all, by default: their heuristic evaluations
// plus computations (about 10 to 25 million a second here). One replay of a
// large trace costs seconds, so a count of replays alone does not bound the
// search.
inline constexpr int64_t kDefaultBlameEvals = 800'000'000;

struct BlameOptions {
  int max_replays = 200;  // candidate replays, verification not counted
  // Stop after the batch in which the candidate replays' heuristic
  // evaluations plus computations reach it (0: no cap). Batches are fixed,
  // so where it stops does not depend on the threads.
  int64_t max_evals = kDefaultBlameEvals;
  int max_fixes = 3;      // stop after this many fixes of the smallest size
  int candidates_per_decision = 3;
  int pair_bases = 4;  // singles extended to pairs
  double regime_factor = 1.5;
  int jobs = 0;
};

enum class BlameGoal { kPass, kFaster };
std::string_view BlameGoalName(BlameGoal goal);  // "pass", "faster"

struct DecisionOverride {
  int64_t index = 0;  // decision index in the run with the earlier overrides applied
  int64_t event = 0;
  int64_t clock = 0;
  StorageId original = -1;     // what the heuristic chose
  StorageId replacement = -1;  // what the override evicts instead
};

struct BlameFix {
  std::vector<DecisionOverride> overrides;
  Outcome outcome = Outcome::kPass;
  double overhead = 0;
  int64_t events = 0;
  bool verified = false;  // a fresh replay reproduced the outcome and took every override
};

struct BlameResult {
  RunProfile run;
  std::optional<RunProfile> against;
  std::optional<FirstDivergence> divergence;  // of run from against
  BlameGoal goal = BlameGoal::kPass;
  double overhead_goal = 0;  // kFaster: pass with overhead <= this
  int64_t decisions = 0;     // decisions of the run
  int64_t replays = 0;       // candidate replays spent
  int64_t evals = 0;         // their heuristic evaluations plus computations
  int64_t singles_tried = 0, pairs_tried = 0;
  bool budget_exhausted = false;  // stopped by max_replays or max_evals
  std::vector<BlameFix> fixes;    // smallest size first, in search order
};

// Throws Error if there is nothing to flip (the run passes and is not slower
// than `against`, or `against` does not pass).
BlameResult Blame(const Trace& trace, const Baseline& baseline, const RunSpec& run,
                  const std::optional<RunSpec>& against, const BlameOptions& options,
                  const ProgressFn& progress = nullptr);

}  // namespace dtr
