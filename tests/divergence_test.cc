// Divergence between two runs: hand traces where the first divergent decision
// and the statistics are known, the term-flip rule on hand numbers, and the
// ResNet-32 and LSTM pairs checked against their decision logs and the
// published picture.
#include "diagnose/divergence.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <tuple>

#include "checker/drivers/sweep.h"
#include "diagnose/decision_log.h"
#include "model/trace_parser.h"
#include "tests/hand_traces.h"
#include "tests/test_paths.h"
#include "tests/test_runs.h"

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

// CompareRuns keeps only a 16-byte trail per decision and replays each run
// again for the decisions it shows whole. The reference here keeps both
// decision logs whole, pairs decisions with a map over the whole run, and
// finds each storage's terms in the other run by a replay stopped at that
// decision (TermsAtDecision): every field must agree.
struct Reference {
  FirstDivergence first;
  DecisionAlignment after;  // with every differing pair
  std::optional<RankFlipAt> first_rank_flip, first_term_flip;
};

Reference CompareByLogs(const Trace& trace, const Baseline& baseline, const RunSpec& a,
                        const RunSpec& b) {
  Reference ref;
  ReplayConfig ca = ConfigFor(a, baseline), cb = ConfigFor(b, baseline);
  DecisionRecorder rec_a, rec_b;
  ReplayConfig ra_config = ca, rb_config = cb;
  ra_config.observer = &rec_a;
  rb_config.observer = &rec_b;
  RunResult ra = Replay(trace, ra_config), rb = Replay(trace, rb_config);
  const DecisionLog &la = rec_a.log(), &lb = rec_b.log();
  ref.first = FindFirstDivergence(la, ra, lb, rb);
  const int64_t from = ref.first.index;
  const int64_t na = static_cast<int64_t>(la.decisions.size()),
                nb = static_cast<int64_t>(lb.decisions.size());
  ref.after.after_a = std::max<int64_t>(0, na - from);
  ref.after.after_b = std::max<int64_t>(0, nb - from);
  using Key = std::tuple<int32_t, TensorId, int32_t, int64_t>;
  auto key = [](const DecisionPoint& d) {
    return Key{d.program_step, d.tensor, d.remat_depth, d.request};
  };
  std::map<Key, std::deque<int64_t>> pending;
  for (int64_t j = from; j < nb; ++j) pending[key(lb.decisions[j])].push_back(j);
  for (int64_t i = from; i < na; ++i) {
    auto it = pending.find(key(la.decisions[i]));
    if (it == pending.end() || it->second.empty()) continue;
    const int64_t j = it->second.front();
    it->second.pop_front();
    ++ref.after.aligned;
    if (la.decisions[i].chosen == lb.decisions[j].chosen)
      ++ref.after.aligned_same_choice;
    else
      ref.after.differing_pairs.emplace_back(i, j);
  }
  if (a.heuristic != b.heuristic || a.heuristic->cost == CostTerm::kRandom) return ref;
  auto last_eviction = [](const DecisionLog& log, int64_t before, StorageId s) -> int64_t {
    for (int64_t i = before - 1; i >= 0; --i)
      if (log.decisions[i].chosen == s) return i;
    return -1;
  };
  const auto& pairs = ref.after.differing_pairs;
  for (size_t k = 0; k < pairs.size() && k < static_cast<size_t>(kMaxRankFlipProbes); ++k) {
    RankFlipAt r;
    r.a = la.decisions[pairs[k].first];
    r.b = lb.decisions[pairs[k].second];
    const StorageId x = r.a.chosen, y = r.b.chosen;
    std::optional<ScoreTerms> y_in_a, x_in_b;
    if (auto t = TermsAtDecision(trace, ca, r.a.index, y)) y_in_a = t->second;
    if (auto t = TermsAtDecision(trace, cb, r.b.index, x)) x_in_b = t->second;
    // The runner-up's terms in the log are the replayed ones.
    if (r.a.runner_up == y) CHECK(y_in_a == std::optional<ScoreTerms>(r.a.runner_up_terms));
    if (r.b.runner_up == x) CHECK(x_in_b == std::optional<ScoreTerms>(r.b.runner_up_terms));
    r.y_evictable_in_a = y_in_a.has_value();
    r.x_evictable_in_b = x_in_b.has_value();
    if (!y_in_a) r.y_evicted_in_a_at = last_eviction(la, r.a.index, y);
    if (!x_in_b) r.x_evicted_in_b_at = last_eviction(lb, r.b.index, x);
    if (y_in_a && x_in_b) r.flip = ExplainRankFlip(*a.heuristic, r.a.terms, *y_in_a, *x_in_b, r.b.terms);
    if (k == 0) ref.first_rank_flip = r;
    if (r.flip) {
      ref.first_term_flip = r;
      break;
    }
  }
  return ref;
}

void CheckSameFlip(const std::optional<RankFlipAt>& got, const std::optional<RankFlipAt>& want) {
  REQUIRE(got.has_value() == want.has_value());
  if (!got) return;
  CHECK(got->a == want->a);
  CHECK(got->b == want->b);
  CHECK(got->y_evictable_in_a == want->y_evictable_in_a);
  CHECK(got->x_evictable_in_b == want->x_evictable_in_b);
  CHECK(got->y_evicted_in_a_at == want->y_evicted_in_a_at);
  CHECK(got->x_evicted_in_b_at == want->x_evicted_in_b_at);
  CHECK(got->flip == want->flip);
}

void CheckComparison(const RunComparison& cmp, const Reference& ref) {
  CHECK(cmp.first.kind == ref.first.kind);
  CHECK(cmp.first.index == ref.first.index);
  CHECK(cmp.first.in == ref.first.in);
  CHECK(cmp.first.a == ref.first.a);
  CHECK(cmp.first.b == ref.first.b);
  CHECK(cmp.after.after_a == ref.after.after_a);
  CHECK(cmp.after.after_b == ref.after.after_b);
  CHECK(cmp.after.aligned == ref.after.aligned);
  CHECK(cmp.after.aligned_same_choice == ref.after.aligned_same_choice);
  const auto& all = ref.after.differing_pairs;
  const size_t kept = std::min(all.size(), static_cast<size_t>(kMaxRankFlipProbes));
  CHECK(cmp.after.differing_pairs ==
        std::vector<std::pair<int64_t, int64_t>>(all.begin(), all.begin() + kept));
  CheckSameFlip(cmp.first_rank_flip, ref.first_rank_flip);
  CheckSameFlip(cmp.first_term_flip, ref.first_term_flip);
}

void CheckAgainstLogs(const Trace& trace, const Baseline& baseline, const RunSpec& a,
                      const RunSpec& b) {
  const RunComparison cmp = CompareRuns(trace, baseline, a, b);
  const Reference ref = CompareByLogs(trace, baseline, a, b);
  CheckComparison(cmp, ref);
  // The same from a grid's runs and the trails it kept (the report's way),
  // and from runs without trails (replayed again).
  std::vector<RunRecord> made = RunMany(trace, baseline, {a, b}, 2, nullptr, nullptr, 1 << 20);
  REQUIRE(made[0].trail);
  REQUIRE(made[1].trail);
  CHECK(static_cast<int64_t>(made[0].trail->events.size()) == cmp.a.decisions);
  CHECK(static_cast<int64_t>(made[1].trail->steps.size()) == cmp.b.decisions);
  CheckComparison(CompareRuns(trace, baseline, made[0], made[1]), ref);
  made[0].trail = nullptr;
  CheckComparison(CompareRuns(trace, baseline, made[0], made[1]), ref);
  // Blame's first divergence, which keeps no trail, and its runs' records.
  RunRecord run_a, run_b;
  const FirstDivergence first = FirstDivergenceOf(trace, baseline, a, b, &run_a, &run_b);
  CHECK(first.kind == ref.first.kind);
  CHECK(first.index == ref.first.index);
  CHECK(first.in == ref.first.in);
  CHECK(first.a == ref.first.a);
  CHECK(first.b == ref.first.b);
  CHECK(run_a.result.clock == Replay(trace, ConfigFor(a, baseline)).clock);
  CHECK(run_b.result.heuristic_evictions == cmp.b.heuristic.evictions);
  CHECK(run_a.overhead == cmp.a.overhead);
}

TEST_CASE("diff: the trails and probes agree with whole decision logs on the public traces") {
  {
    const auto [trace, baseline] = LoadWithBaseline("resnet32");
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.101"), SpecAtRatio("0.102"));
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.106"), SpecAtRatio("0.107"));
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.2"), SpecAtRatio("0.5"));
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.15"), SpecAtRatio("0.15", "DTREqClass"));
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.15", "MSPS"), SpecAtRatio("0.16", "MSPS"));
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.12", "RandomStorage"),
                     SpecAtRatio("0.13", "RandomStorage"));
  }
  {
    const auto [trace, baseline] = LoadWithBaseline("unet");
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.42"), SpecAtRatio("0.5"));
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.3", "LRU"), SpecAtRatio("0.31", "LRU"));
  }
  {
    const auto [trace, baseline] = LoadWithBaseline("lstm");
    CheckAgainstLogs(trace, baseline, SpecAtRatio("0.264"), SpecAtRatio("0.265"));
  }
}

TEST_CASE("diff: a ranked-differently pair and a run that ended agree with the logs") {
  Trace trace = Chain4();
  Baseline baseline = ComputeBaseline(trace);
  CheckAgainstLogs(trace, baseline, SpecAtBudget(15), SpecAtBudget(30));
  CheckAgainstLogs(trace, baseline, SpecAtBudget(20), SpecAtBudget(30));
  CheckAgainstLogs(trace, baseline, SpecAtBudget(20), SpecAtBudget(20, "LRU"));
  CheckAgainstLogs(trace, baseline, SpecAtBudget(30), SpecAtBudget(30));
  Trace remat = Remat4();
  Baseline remat_baseline = ComputeBaseline(remat);
  CheckAgainstLogs(remat, remat_baseline, SpecAtBudget(28), SpecAtBudget(31));
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
