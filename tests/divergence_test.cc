// Divergence between two runs: hand traces where the first divergent decision
// and the statistics are known, the term-flip rule on hand numbers, and the
// ResNet-32 and LSTM pairs checked against their decision logs and the
// published picture.
#include "diagnose/divergence.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "checker/sweep.h"
#include "diagnose/decision_log.h"
#include "model/trace_parser.h"
#include "tests/hand_traces.h"
#include "tests/test_runs.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

TEST_CASE("diff: remat4 at 28 vs 31 bytes, worked out by hand") {
  Trace trace = Remat4();
  Baseline baseline = ComputeBaseline(trace);
  RunComparison cmp = CompareRuns(trace, baseline, SpecAtBudget(28), SpecAtBudget(31));
  // Run a (28) evicts x1 computing x3 (20 + 10 > 28); run b (31) fits it.
  CHECK(cmp.first.kind == DivergenceKind::kExtraDecision);
  CHECK(cmp.first.in == 'a');
  CHECK(cmp.first.index == 0);
  REQUIRE(cmp.first.a.has_value());
  CHECK(cmp.first.a->event == 2);
  CHECK(cmp.first.a->memory_usage == 20);
  CHECK(cmp.first.a->request == 10);
  REQUIRE(cmp.first.b.has_value());
  CHECK(cmp.first.b->event == 3);
  // a: x1 at event 2 and x2 while rematerializing x1; b: x2 for x4. Nothing aligns.
  CHECK(cmp.after.after_a == 2);
  CHECK(cmp.after.after_b == 1);
  CHECK(cmp.after.aligned == 0);
  CHECK(cmp.after.differing() == 3);
  CHECK_FALSE(cmp.first_rank_flip.has_value());
  // a: heuristic x1, x2; eager x1 (rematerialized), x3, x4. b: heuristic x2; eager x1, x3, x4.
  CHECK(cmp.a.all.evictions == 5);
  CHECK(cmp.a.all.distinct == 4);
  CHECK(cmp.a.all.per_storage == 1.25);
  CHECK(cmp.a.heuristic.evictions == 2);
  CHECK(cmp.a.heuristic.distinct == 2);
  CHECK(cmp.b.all.evictions == 4);
  CHECK(cmp.b.all.per_storage == 1.0);
  CHECK(cmp.b.heuristic.evictions == 1);
  CHECK(cmp.jaccard_all == 1.0);
  CHECK(cmp.jaccard_heuristic == 0.5);
  CHECK(cmp.a.overhead == 1.5);
  CHECK(cmp.b.overhead == 1.25);
  CHECK(cmp.overhead_ratio == doctest::Approx(1.25 / 1.5));
}

TEST_CASE(
    "diff: chain4 at 20 vs 30 bytes: the aligned decision chose differently because the pools "
    "differed") {
  Trace trace = Chain4();
  Baseline baseline = ComputeBaseline(trace);
  RunComparison cmp = CompareRuns(trace, baseline, SpecAtBudget(20), SpecAtBudget(30));
  CHECK(cmp.first.kind == DivergenceKind::kExtraDecision);
  CHECK(cmp.first.in == 'a');
  CHECK(cmp.first.a->event == 2);
  // a's decision 1 and b's decision 0 both make room for x4: a evicts x2, b x1.
  CHECK(cmp.after.aligned == 1);
  CHECK(cmp.after.aligned_same_choice == 0);
  REQUIRE(cmp.first_rank_flip.has_value());
  const RankFlipAt& r = *cmp.first_rank_flip;
  CHECK(r.a.index == 1);
  CHECK(r.b.index == 0);
  CHECK(r.a.chosen == StorageOf(trace, "x2"));
  CHECK(r.b.chosen == StorageOf(trace, "x1"));
  CHECK_FALSE(r.y_evictable_in_a);  // x1 was evicted by a's decision 0
  CHECK(r.y_evicted_in_a_at == 0);
  CHECK(r.x_evictable_in_b);  // x2 was b's runner-up
  CHECK_FALSE(r.flip.has_value());
  CHECK(cmp.jaccard_heuristic == 0.5);  // {x1, x2} vs {x1}
}

TEST_CASE("first divergence: a run that ended, and the same point ranked differently") {
  Trace trace = Chain4();
  Baseline baseline = ComputeBaseline(trace);
  auto record = [&](int64_t budget, std::vector<std::pair<int64_t, StorageId>> overrides,
                    RunResult& r) {
    ReplayConfig c = ConfigFor(SpecAtBudget(budget), baseline);
    c.overrides = std::move(overrides);
    DecisionRecorder rec;
    c.observer = &rec;
    r = Replay(trace, c);
    return rec.log();
  };
  RunResult r15, r30, r30x2;
  DecisionLog l15 = record(15, {}, r15), l30 = record(30, {}, r30);
  FirstDivergence f = FindFirstDivergence(l15, r15, l30, r30);
  CHECK(f.kind ==
        DivergenceKind::kRunEnded);  // 15 bytes: OOM at event 1, before b's decision at event 3
  CHECK(f.in == 'a');
  DecisionLog l30x2 = record(30, {{0, StorageOf(trace, "x2")}}, r30x2);
  f = FindFirstDivergence(l30, r30, l30x2, r30x2);
  CHECK(f.kind == DivergenceKind::kRankedDifferently);
  CHECK(f.index == 0);
  CHECK(f.b->overridden);
  CHECK(FindFirstDivergence(l30, r30, l30, r30).kind == DivergenceKind::kNone);
}

TEST_CASE("rank flip: which terms, moved alone, reverse the order") {
  const HeuristicSpec& dtr = FindHeuristic("DTR");
  // a: x 4/(10*2) = 0.2 < y 3/(10*1) = 0.3. b: y's staleness grew to 3: y 0.1 < x 0.2.
  RankFlip f = ExplainRankFlip(dtr, {4, 10, 2}, {3, 10, 1}, {4, 10, 2}, {3, 10, 3});
  CHECK(f.x_score_a < f.y_score_a);
  CHECK(f.y_score_b < f.x_score_b);
  REQUIRE(f.flipping_terms.size() == 1);
  CHECK(f.flipping_terms[0] == std::vector<ScoreTerm>{ScoreTerm::kStaleness});
  // b: y's cost fell to 1 instead.
  f = ExplainRankFlip(dtr, {4, 10, 2}, {3, 10, 1}, {4, 10, 2}, {1, 10, 1});
  REQUIRE(f.flipping_terms.size() == 1);
  CHECK(f.flipping_terms[0] == std::vector<ScoreTerm>{ScoreTerm::kCost});
  // Neither alone: a: x 40/20 = 2 < y 50/20 = 2.5; b: x 40/18 = 2.22 > y 42/20 = 2.1.
  // Cost alone: 2 < 2.1; staleness alone: 2.22 < 2.5; both: 2.22 > 2.1.
  f = ExplainRankFlip(dtr, {40, 1, 20}, {50, 1, 20}, {40, 1, 18}, {42, 1, 20});
  REQUIRE(f.flipping_terms.size() == 1);
  CHECK(f.flipping_terms[0] == std::vector<ScoreTerm>{ScoreTerm::kCost, ScoreTerm::kStaleness});
  // y's staleness grows from 1 to 9: DTR flips (4/90 < 3/10), a heuristic
  // without staleness does not (0.4 > 0.3 in both runs).
  f = ExplainRankFlip(dtr, {3, 10, 1}, {4, 10, 1}, {3, 10, 1}, {4, 10, 9});
  REQUIRE(f.flipping_terms.size() == 1);
  CHECK(f.flipping_terms[0] == std::vector<ScoreTerm>{ScoreTerm::kStaleness});
  f = ExplainRankFlip(FindHeuristic("AbESize"), {3, 10, 1}, {4, 10, 1}, {3, 10, 1}, {4, 10, 9});
  CHECK(f.flipping_terms.empty());
}

TEST_CASE("diff: ResNet-32 0.101 vs 0.102, confirmed by both runs' decision logs") {
  const auto [trace, baseline] = LoadWithBaseline("resnet32");
  RunSpec a = SpecAtRatio("0.101"), b = SpecAtRatio("0.102");
  RunComparison cmp = CompareRuns(trace, baseline, a, b);
  std::string pa =
      TempPath("dtrcheck_test_r101.jsonl.gz").string();
  std::string pb =
      TempPath("dtrcheck_test_r102.jsonl.gz").string();
  RunAndRecord(trace, baseline, a, pa, "resnet32");
  RunAndRecord(trace, baseline, b, pb, "resnet32");
  DecisionLogFile la = ReadDecisionLog(pa, trace), lb = ReadDecisionLog(pb, trace);
  std::filesystem::remove(pa);
  std::filesystem::remove(pb);
  const auto &da = la.log.decisions, &db = lb.log.decisions;
  REQUIRE(cmp.first.kind == DivergenceKind::kExtraDecision);
  const size_t k = static_cast<size_t>(cmp.first.index);
  REQUIRE(k < da.size());
  REQUIRE(k < db.size());
  // The logs agree on every decision before it ...
  for (size_t i = 0; i < k; ++i) {
    CHECK(da[i].event == db[i].event);
    CHECK(da[i].memory_usage == db[i].memory_usage);
    CHECK(da[i].chosen == db[i].chosen);
  }
  // ... and at it, one run had a decision point the other fit without: the
  // allocation exceeds one budget and not the other, and the other run's
  // next decision comes later.
  const DecisionPoint& extra = cmp.first.in == 'a' ? da[k] : db[k];
  const DecisionPoint& other = cmp.first.in == 'a' ? db[k] : da[k];
  int64_t budget_with = cmp.first.in == 'a' ? la.header.budget : lb.header.budget;
  int64_t budget_without = cmp.first.in == 'a' ? lb.header.budget : la.header.budget;
  CHECK(extra.memory_usage + extra.request > budget_with);
  CHECK(extra.memory_usage + extra.request <= budget_without);
  CHECK(other.event > extra.event);
  CHECK(extra.chosen == (cmp.first.in == 'a' ? cmp.first.a : cmp.first.b)->chosen);
  CHECK(cmp.b.outcome == Outcome::kOom);
  CHECK(cmp.a.outcome == Outcome::kPass);
  // The first pair that scores alone decided really flipped between the runs.
  REQUIRE(cmp.first_term_flip.has_value());
  const RankFlip& f = *cmp.first_term_flip->flip;
  CHECK(f.x_score_a <= f.y_score_a);
  CHECK(f.y_score_b <= f.x_score_b);
  CHECK_FALSE(f.flipping_terms.empty());
}

// The published LSTM regime switch (found with `dtrcheck scan lstm --ratios
// 0.25:0.28:0.001`): budgets 0.001 apart, several-x overhead, evictions per
// storage up several-fold, the same evicted set (5,236 vs 5,233 storages).
TEST_CASE("LSTM regime switch: 0.264 (slow) vs 0.265 (fast)") {
  const auto [trace, baseline] = LoadWithBaseline("lstm");
  std::vector<RunRecord> runs =
      RunMany(trace, baseline, {SpecAtRatio("0.264"), SpecAtRatio("0.265")}, 2);
  RunProfile slow = ProfileRun(runs[0]), fast = ProfileRun(runs[1]);
  CHECK(slow.outcome == Outcome::kPass);
  CHECK(fast.outcome == Outcome::kPass);
  CHECK(slow.overhead / fast.overhead > 5);
  CHECK(slow.all.distinct == 5236);
  CHECK(fast.all.distinct == 5233);
  CHECK(slow.all.per_storage == doctest::Approx(8.27).epsilon(0.001));
  CHECK(fast.all.per_storage == doctest::Approx(1.33).epsilon(0.002));
  CHECK(EvictedJaccard(runs[0].result.evict_count, runs[1].result.evict_count) > 0.999);
}

}  // namespace
}  // namespace dtr::testing
