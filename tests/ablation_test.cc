// Ablations: which ablations lack which term, the verdict rule on hand-made
// scans, and the ablations that are DTR / DTREqClass under another name
// reproducing their scans exactly on ResNet-32.
#include "diagnose/ablation.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "model/trace_parser.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

AblationScan Scan(const char* name, int passing, int cliffs, int inversions) {
  AblationScan a;
  a.heuristic = &FindHeuristic(name);
  a.control = a.heuristic->cost == CostTerm::kRandom;
  a.has_cost = a.heuristic->cost != CostTerm::kOne && !a.control;
  a.has_size = a.heuristic->divide_by_size;
  a.has_staleness = a.heuristic->divide_by_staleness;
  for (int i = 0; i < passing; ++i) a.points.push_back(ScanPoint{});
  a.analysis.cliffs.resize(cliffs);
  a.analysis.inversions.resize(inversions);
  return a;
}

const TermVerdict& Verdict(const std::vector<TermVerdict>& v, ScoreTerm term) {
  for (const TermVerdict& t : v)
    if (t.term == term) return t;
  FAIL("no verdict");
  return v[0];
}

TEST_CASE("ablation verdicts: survive, vanish, untested") {
  std::vector<AblationScan> scans = {
      Scan("AbESizeStale", 30, 1, 1),  // all terms
      Scan("AbESize", 30, 0, 1),       // without staleness: the inversion survives
      Scan("AbEStale", 30, 0, 0),      // without size: informative, nothing
      Scan("AbSizeStale", 1, 0, 0),    // without cost: passes once only
      Scan("AbRandom", 30, 5, 5),      // control: ignored
  };
  std::vector<TermVerdict> v = JudgeTerms(scans);
  const TermVerdict& stale = Verdict(v, ScoreTerm::kStaleness);
  CHECK(stale.without == std::vector<std::string_view>{"AbESize"});
  CHECK(stale.inversions() == Survival::kSurvive);
  CHECK(stale.cliffs() == Survival::kVanish);
  const TermVerdict& size = Verdict(v, ScoreTerm::kSize);
  CHECK(size.without == std::vector<std::string_view>{"AbEStale"});
  CHECK(size.cliffs() == Survival::kVanish);
  CHECK(size.inversions() == Survival::kVanish);
  const TermVerdict& cost = Verdict(v, ScoreTerm::kCost);
  CHECK(cost.without == std::vector<std::string_view>{"AbSizeStale"});
  CHECK(cost.without_informative.empty());
  CHECK(cost.cliffs() == Survival::kUntested);
  CHECK(cost.with.size() == 3);
  CHECK(cost.with_with_inversions.size() == 2);
}

TEST_CASE("ablation verdicts: an ablation with a stopped run cannot show that anything vanishes") {
  AblationScan stopped = Scan("AbEStale", 30, 0, 0);  // without size, passes at 30 budgets
  stopped.points[0].outcome = Outcome::kStopped;
  std::vector<TermVerdict> v = JudgeTerms({Scan("AbESizeStale", 30, 1, 1), stopped});
  const TermVerdict& size = Verdict(v, ScoreTerm::kSize);
  CHECK(size.without == std::vector<std::string_view>{"AbEStale"});
  CHECK(size.without_informative.empty());
  CHECK(size.cliffs() == Survival::kUntested);
  CHECK(size.inversions() == Survival::kUntested);
  // What a stopped ablation does show still counts.
  stopped.analysis.cliffs.resize(1);
  v = JudgeTerms({stopped});
  CHECK(Verdict(v, ScoreTerm::kSize).cliffs() == Survival::kSurvive);
}

TEST_CASE("ablate with a cap: each run stops at its share; the others are the uncapped runs") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  ScanOptions options;
  options.heuristic = &FindHeuristic("DTR");
  options.jobs = 2;
  const std::vector<Ratio> ratios = ParseRatios("0.1:0.5:0.1");
  const size_t runs = 17 * ratios.size();
  const AblationResult all = Ablate(trace, baseline, ratios, options, 0);
  CHECK(all.stopped == 0);
  CHECK(all.run_work_limit == 0);
  // A cap that stops some runs but not all: the median work of a run.
  std::vector<int64_t> work;
  auto each_run = [](const AblationResult& r, auto&& f) {
    for (size_t i = 0; i < r.base.points.size(); ++i) f(r.base, i);
    for (const AblationScan& a : r.ablations)
      for (size_t i = 0; i < a.points.size(); ++i) f(a, i);
  };
  // The work of each uncapped run, by replaying it (ScanPoint keeps no counts).
  std::vector<std::vector<int64_t>> work_of;
  auto replay_work = [&](const AblationScan& a, size_t i) {
    RunSpec s = RunSpecOf(options);
    s.heuristic = a.heuristic;
    s.ratio = ratios[i];
    const RunResult r = RunOne(trace, baseline, s).result;
    return r.heuristic_evals + r.events;
  };
  each_run(all, [&](const AblationScan& a, size_t i) { work.push_back(replay_work(a, i)); });
  REQUIRE(work.size() == runs);
  std::vector<int64_t> sorted = work;
  std::sort(sorted.begin(), sorted.end());
  const int64_t share = sorted[runs / 2];
  const int64_t max_evals = share * static_cast<int64_t>(runs);
  CHECK(AblateRunWorkLimit(max_evals, runs) == share);
  const AblationResult capped = Ablate(trace, baseline, ratios, options, max_evals);
  CHECK(capped.run_work_limit == share);
  CHECK(capped.max_evals == max_evals);
  size_t k = 0, stopped = 0;
  std::vector<ScanPoint> uncapped;
  each_run(all, [&](const AblationScan& a, size_t i) { uncapped.push_back(a.points[i]); });
  each_run(capped, [&](const AblationScan& a, size_t i) {
    const ScanPoint& p = a.points[i];
    INFO(a.heuristic->name, " at ", ratios[i].value, ": work ", work[k], ", share ", share);
    if (work[k] <= share) {
      // Never past its share: the same run.
      CHECK(p.outcome == uncapped[k].outcome);
      CHECK(p.overhead == uncapped[k].overhead);
      CHECK(p.evictions == uncapped[k].evictions);
    } else if (uncapped[k].outcome == Outcome::kPass) {
      // A pass counts every evaluation before its last computation.
      CHECK(p.outcome == Outcome::kStopped);
    }
    stopped += p.outcome == Outcome::kStopped;
    ++k;
  });
  CHECK(stopped == capped.stopped);
  CHECK(stopped > 0);
  CHECK(stopped < runs / 2 + 1);
}

TEST_CASE(
    "ablate: AbESizeStale is DTR and AbEqSizeStale is DTREqClass, budget for budget (ResNet-32)") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  ScanOptions options;
  options.heuristic = &FindHeuristic("DTR");
  options.jobs = 2;
  AblationResult r = Ablate(trace, baseline, ParseRatios("0.100:0.108:0.001"), options, 0);
  REQUIRE(r.ablations.size() == 16);
  // Each ablation's terms match its name.
  for (const AblationScan& a : r.ablations) {
    std::string_view n = a.heuristic->name;
    INFO(n);
    CHECK(a.has_size == (n.find("Size") != std::string_view::npos));
    CHECK(a.has_staleness == (n.find("Stale") != std::string_view::npos));
    bool cost =
        n.rfind("AbE", 0) == 0 || n.rfind("AbLocal", 0) == 0;  // AbE* and AbEq* and AbLocal*
    CHECK(a.has_cost == cost);
    CHECK(a.control == (n == "AbRandom"));
  }
  auto find = [&](std::string_view name) -> const AblationScan& {
    for (const AblationScan& a : r.ablations)
      if (a.heuristic->name == name) return a;
    FAIL("missing ", name);
    return r.ablations[0];
  };
  const AblationScan& same = find("AbESizeStale");
  REQUIRE(same.points.size() == r.base.points.size());
  for (size_t i = 0; i < same.points.size(); ++i) {
    CHECK(same.points[i].outcome == r.base.points[i].outcome);
    CHECK(same.points[i].overhead == r.base.points[i].overhead);
    CHECK(same.points[i].evictions == r.base.points[i].evictions);
  }
  REQUIRE(r.base.analysis.inversions.size() == 1);
  CHECK(same.analysis.inversions.size() == 1);
  // DTREqClass's own scan against AbEqSizeStale's.
  ScanOptions eq = options;
  eq.heuristic = &FindHeuristic("DTREqClass");
  ScanResult eq_scan = ScanInstability(trace, baseline, ParseRatios("0.100:0.108:0.001"), eq);
  const AblationScan& eq_same = find("AbEqSizeStale");
  for (size_t i = 0; i < eq_same.points.size(); ++i)
    CHECK(eq_same.points[i].overhead == eq_scan.points[i].overhead);
}

}  // namespace
}  // namespace dtr::testing
