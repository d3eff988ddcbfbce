// Where two runs of one trace part ways, and how differently they evict.
//
// Two runs of the same trace and heuristic at different budgets are the same
// run until the first budget comparison that comes out differently, so their
// decision logs share a prefix. The first divergence is the first decision
// after that prefix: one run had a decision point the other did not (or one
// run ended there), or - for runs that differ otherwise, e.g. in heuristic -
// the same decision point chose another storage. After it the states differ;
// later decisions are aligned by what they make room for, and the first
// aligned pair that chose differently is explained term by term.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "checker/drivers/decision_trail.h"
#include "checker/drivers/sweep.h"
#include "diagnose/decision_log.h"
#include "diagnose/score_terms.h"

namespace dtr {

// How often a run evicted: evictions, distinct storages evicted, and their
// quotient (evictions per evicted storage; 0 without evictions).
struct EvictionStats {
  int64_t evictions = 0;
  int32_t distinct = 0;
  double per_storage = 0;
};

struct RunProfile {
  RunSpec spec;
  int64_t budget = 0;
  Outcome outcome = Outcome::kPass;
  double overhead = 0;
  int64_t clock = 0;
  int64_t events = 0;
  EvictionStats all;  // heuristic and eager evictions together, as simrd's telemetry counts them
  EvictionStats heuristic;  // evictions chosen by the heuristic only
  int64_t decisions = 0;    // heuristic decision points (== heuristic.evictions)
};

RunProfile ProfileRun(const RunRecord& run);

// |A ∩ B| / |A ∪ B| of the storages with a nonzero count (1 if both are empty).
double EvictedJaccard(const std::vector<int32_t>& a_counts, const std::vector<int32_t>& b_counts);

enum class DivergenceKind {
  kNone,               // same decisions, same outcome
  kExtraDecision,      // `in` had a decision point where the other run fit without one
  kRankedDifferently,  // the same decision point chose different storages
  kRunEnded,           // `in` ended (OOM, thrash) before the other run's next decision
};
std::string_view DivergenceKindName(DivergenceKind kind);  // "none", "extra-decision", ...

struct FirstDivergence {
  DivergenceKind kind = DivergenceKind::kNone;
  int64_t index = 0;  // decisions made identically by both runs before it
  char in = 0;        // 'a' or 'b': the run with the extra decision / that ended; 0 otherwise
  std::optional<DecisionPoint> a, b;  // each run's decision `index`, if it made one
};

// REQUIRES: the logs are those of runs ra and rb.
FirstDivergence FindFirstDivergence(const DecisionLog& a, const RunResult& ra, const DecisionLog& b,
                                    const RunResult& rb);
// The same from the first `index` decisions the runs made identically and
// each run's decision `index`, if it made one.
FirstDivergence ClassifyDivergence(int64_t index, const std::optional<DecisionPoint>& a,
                                   const RunResult& ra, const std::optional<DecisionPoint>& b,
                                   const RunResult& rb);

constexpr int kMaxRankFlipProbes = 64;

// Decisions from `from` on, paired across the runs: decisions at the same
// program step making room for the same tensor at the same remat depth (so
// with the same request) are paired in order of occurrence.
struct DecisionAlignment {
  int64_t after_a = 0, after_b = 0;  // decisions from `from` on in each run
  int64_t aligned = 0;               // pairs found
  int64_t aligned_same_choice = 0;   // pairs that evicted the same storage
  // Decisions without a same-choice partner in the other run, both runs together.
  int64_t differing() const { return after_a + after_b - 2 * aligned_same_choice; }
  // The first kMaxRankFlipProbes pairs that chose differently, by index in a
  // then b, in order of a.
  std::vector<std::pair<int64_t, int64_t>> differing_pairs;
};

// Throws Error if a trail's program steps go back (a replay never does).
DecisionAlignment AlignDecisions(const DecisionTrail& a, const DecisionTrail& b, int64_t from);

// The first aligned pair that chose differently: run a evicted x, run b
// evicted y. Each storage's terms in the other run are found by replaying
// that run with an override up to the decision.
struct RankFlipAt {
  DecisionPoint a, b;
  bool y_evictable_in_a = false;  // was b's choice in a's pool at that decision?
  bool x_evictable_in_b = false;
  // When not: the last earlier decision of that run that evicted it (-1: none;
  // it was locked, not yet computed, or evicted eagerly).
  int64_t y_evicted_in_a_at = -1;
  int64_t x_evicted_in_b_at = -1;
  std::optional<RankFlip> flip;  // when both were evictable in both runs
};

struct RunComparison {
  RunProfile a, b;
  FirstDivergence first;
  DecisionAlignment after;  // from first.index on
  std::optional<RankFlipAt> first_rank_flip;
  // The first differing aligned pair whose two storages were evictable in
  // both runs, so that the scores alone decided (searched among the first
  // kMaxRankFlipProbes differing pairs); may be first_rank_flip itself.
  std::optional<RankFlipAt> first_term_flip;
  double jaccard_all = 1;  // |A ∩ B| / |A ∪ B| of the evicted storage sets (1 if both empty)
  double jaccard_heuristic = 1;  // the same for storages evicted by the heuristic
  double overhead_ratio = 1;     // b.overhead / a.overhead
};

// The same as FindFirstDivergence on the two runs' decision logs, without
// keeping them: the runs replayed side by side, then each up to its decision
// at the divergence. The runs' records go to run_a and run_b when given.
FirstDivergence FirstDivergenceOf(const Trace& trace, const Baseline& baseline, const RunSpec& a,
                                  const RunSpec& b, RunRecord* run_a = nullptr,
                                  RunRecord* run_b = nullptr);

// Replays both runs side by side keeping their trails (the decisions both
// made alike are compared as they come and dropped), then replays each up to
// the last decision it must explain, reading the scores there only.
// `watchers` (may be null) watch the two runs side by side
// (ReplayConfig::watcher), from two threads.
RunComparison CompareRuns(const Trace& trace, const Baseline& baseline, const RunSpec& a,
                          const RunSpec& b, std::array<ReplayObserver*, 2> watchers = {});
// The same for two runs already made: from their trails (RunMany's
// trail_decisions) when both have one and they differ in budget alone, with
// only the replays up to the decisions it explains; else as above.
RunComparison CompareRuns(const Trace& trace, const Baseline& baseline, const RunRecord& a,
                          const RunRecord& b);

// The score and terms `storage` has at decision `index` of the run `config`
// describes (replayed up to that decision with an override); nullopt if the
// storage is not in the eviction pool then or the run has no such decision.
// REQUIRES: config has no overrides at or after `index`.
std::optional<std::pair<double, ScoreTerms>> TermsAtDecision(const Trace& trace,
                                                             const ReplayConfig& config,
                                                             int64_t index, StorageId storage);

}  // namespace dtr
