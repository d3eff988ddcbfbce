// The scan: regime / cliff / inversion rules on hand-made points, boundary
// refinement on hand traces whose byte boundaries are known, and the
// ResNet-32 feasibility inversion with its edges confirmed by replays.
#include "diagnose/instability_scan.h"

#include <doctest/doctest.h>

#include <tuple>

#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "reports/instability_report.h"
#include "tests/hand_traces.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

ScanPoint Point(const char* ratio, Outcome outcome, double overhead, int64_t evictions,
                int32_t distinct) {
  ScanPoint p;
  p.ratio = ParseRatio(ratio);
  p.outcome = outcome;
  p.overhead = overhead;
  p.evictions = evictions;
  p.distinct_evicted = distinct;
  return p;
}

ScanOptions Dtr() {
  ScanOptions o;
  o.heuristic = &FindHeuristic("DTR");
  o.jobs = 2;
  return o;
}

Outcome ReplayAt(const Trace& trace, const Baseline& baseline, int64_t budget,
                 double* overhead = nullptr) {
  RunSpec s;
  s.heuristic = &FindHeuristic("DTR");
  s.budget = budget;
  RunRecord r = RunOne(trace, baseline, s);
  if (overhead) *overhead = r.overhead;
  return r.result.outcome;
}

TEST_CASE("scan analysis: regimes, cliffs and inversions of hand-made points") {
  const Outcome P = Outcome::kPass, O = Outcome::kOom;
  std::vector<ScanPoint> points = {
      Point("0.1", O, 1.0, 5, 5),    // OOM at the bottom: not an inversion
      Point("0.2", P, 2.0, 20, 10),  // fast: 2 evictions per storage
      Point("0.3", P, 2.2, 21, 10),
      Point("0.4", O, 1.1, 5, 5),  // inversion 0.3 | 0.4-0.5 | 0.6
      Point("0.5", O, 1.1, 5, 5),
      Point("0.6", P, 2.1, 20, 10),
      Point("0.7", P, 6.0, 80, 10),  // cliff 0.6 -> 0.7 (2.86x), slow regime: 8 per storage
      Point("0.8", P, 5.5, 75, 10),
      Point("0.9", P, 2.0, 100,
            10),  // fast overhead but 10 per storage: a regime of its own, no cliff
  };
  ScanAnalysis a = AnalyzeScan(points, 1.5);
  REQUIRE(a.regimes.size() == 4);
  // Passing regimes by least overhead (2.0 twice: the one reaching lower, 0.2's, first), then OOM.
  CHECK(a.regimes[0].outcome == P);
  CHECK(a.regimes[0].runs == 3);
  REQUIRE(a.regimes[0].ranges.size() == 2);
  CHECK(a.regimes[0].ranges[0].from == 1);
  CHECK(a.regimes[0].ranges[0].to == 2);
  CHECK(a.regimes[0].ranges[1].from == 5);
  CHECK(a.regimes[0].ranges[1].to == 5);
  CHECK(points[8].regime == 1);
  CHECK(a.regimes[1].per_storage_min == 10.0);
  CHECK(points[6].regime == 2);
  CHECK(points[7].regime == 2);
  CHECK(a.regimes[2].overhead_min == 5.5);
  CHECK(a.regimes[3].outcome == O);
  CHECK(a.regimes[3].runs == 3);
  CHECK(points[0].regime == 3);
  REQUIRE(a.cliffs.size() == 2);  // 0.6 -> 0.7 and 0.8 -> 0.9
  CHECK(a.cliffs[0].lower == 5);
  CHECK(a.cliffs[0].upper == 6);
  CHECK(a.cliffs[0].factor == doctest::Approx(6.0 / 2.1));
  CHECK(a.cliffs[1].lower == 7);
  REQUIRE(a.inversions.size() == 1);
  CHECK(a.inversions[0].feasible_below == 2);
  CHECK(a.inversions[0].oom_from == 3);
  CHECK(a.inversions[0].oom_to == 4);
  CHECK(a.inversions[0].feasible_above == 5);
  // A larger factor links 0.6 with 0.7 through overhead, not through re-eviction.
  CHECK(AnalyzeScan(points, 3.0).cliffs.empty());
  // An OOM run at the top has no feasible budget above it.
  std::vector<ScanPoint> top = {Point("0.1", P, 2, 2, 1), Point("0.2", O, 1, 1, 1)};
  CHECK(AnalyzeScan(top, 1.5).inversions.empty());
}

TEST_CASE("refine: remat4's feasibility boundary is between bytes 24 and 25") {
  Trace trace = Remat4();
  Baseline baseline = ComputeBaseline(trace);
  REQUIRE(baseline.memory == 35);
  ScanOptions options = Dtr();
  auto at = [&](int64_t budget) {
    RunSpec s;
    s.heuristic = options.heuristic;
    s.budget = budget;
    return MakeScanPoint(RunOne(trace, baseline, s));
  };
  ScanPoint oom17 = at(17), pass28 = at(28);
  CHECK(oom17.outcome == Outcome::kOom);
  CHECK(oom17.budget_lo == 10);  // 10 fits, 20 does not
  CHECK(oom17.budget_hi == 19);
  CHECK(pass28.budget_lo == 25);
  CHECK(pass28.budget_hi == 29);
  ScanBoundary b = LocateBoundary(trace, baseline, options, oom17, pass28);
  CHECK(b.last_byte == 24);
  CHECK(b.first_byte == 25);
  CHECK(b.sharp());
  CHECK(b.replays == 1);  // one replay at 20 covers 20..24
  CHECK(b.below.outcome == Outcome::kOom);
  CHECK(b.above.outcome == Outcome::kPass);
  CHECK(ReplayAt(trace, baseline, 24) == Outcome::kOom);
  CHECK(ReplayAt(trace, baseline, 25) == Outcome::kPass);
}

TEST_CASE("scan: remat4's cliff (1.5 -> 1.25) is refined to bytes 29 | 30") {
  Trace trace = Remat4();
  Baseline baseline = ComputeBaseline(trace);
  ScanOptions options = Dtr();
  options.cliff_factor = 1.1;
  options.refine = true;
  // Budgets int(35 * r): 17 (OOM), 28 (1.5), 31 (1.25), 35 (1.25, no decision).
  ScanResult scan = ScanInstability(trace, baseline, ParseRatios("0.5,0.8,0.9,1.0"), options);
  REQUIRE(scan.points.size() == 4);
  CHECK(scan.points[1].budget == 28);
  CHECK(scan.points[1].overhead == 1.5);
  CHECK(scan.points[2].overhead == 1.25);
  CHECK(scan.analysis.inversions.empty());
  REQUIRE(scan.analysis.cliffs.size() == 1);
  const ScanCliff& c = scan.analysis.cliffs[0];
  CHECK(c.lower == 1);
  CHECK(c.upper == 2);
  REQUIRE(c.boundary.has_value());
  CHECK(c.boundary->last_byte == 29);
  CHECK(c.boundary->first_byte == 30);
  CHECK(c.boundary->sharp());
  double o29 = 0, o30 = 0;
  CHECK(ReplayAt(trace, baseline, 29, &o29) == Outcome::kPass);
  CHECK(ReplayAt(trace, baseline, 30, &o30) == Outcome::kPass);
  CHECK(o29 == 1.5);
  CHECK(o30 == 1.25);
  REQUIRE(scan.analysis.regimes.size() == 3);  // {0.9, 1.0} at 1.25, {0.8} at 1.5, {0.5} OOM
  CHECK(scan.points[2].regime == 0);
  CHECK(scan.points[3].regime == 0);
  CHECK(scan.points[1].regime == 1);
  CHECK(scan.points[0].regime == 2);
}

TEST_CASE(
    "scan: ResNet-32 DTR 0.085..0.125 has the inversion 0.101 | 0.102-0.106 | 0.107; replays "
    "confirm its edges") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  ScanOptions options = Dtr();
  options.refine = true;
  options.max_walk =
      16;  // keeps the test short: the lower edge takes 13 intervals, the upper edge bisects
  ScanResult scan = ScanInstability(trace, baseline, ParseRatios("0.085:0.125:0.001"), options);
  REQUIRE(scan.points.size() == 41);
  REQUIRE(scan.analysis.inversions.size() == 1);
  const ScanInversion& v = scan.analysis.inversions[0];
  CHECK(scan.points[v.feasible_below].ratio->text == "0.101");
  CHECK(scan.points[v.oom_from].ratio->text == "0.102");
  CHECK(scan.points[v.oom_to].ratio->text == "0.106");
  CHECK(scan.points[v.feasible_above].ratio->text == "0.107");
  REQUIRE(v.lower_edge.has_value());
  REQUIRE(v.upper_edge.has_value());
  const ScanBoundary &lo = *v.lower_edge, &hi = *v.upper_edge;
  CHECK(lo.first_byte == lo.last_byte + 1);
  CHECK(hi.first_byte == hi.last_byte + 1);
  CHECK(scan.points[v.feasible_below].budget <= lo.last_byte);
  CHECK(lo.first_byte <= scan.points[v.oom_from].budget);
  CHECK(scan.points[v.oom_to].budget <= hi.last_byte);
  CHECK(hi.first_byte <= scan.points[v.feasible_above].budget);
  // Independent replays on both sides of both edges.
  CHECK(ReplayAt(trace, baseline, lo.last_byte) == Outcome::kPass);
  CHECK(ReplayAt(trace, baseline, lo.first_byte) == Outcome::kOom);
  CHECK(ReplayAt(trace, baseline, hi.last_byte) == Outcome::kOom);
  CHECK(ReplayAt(trace, baseline, hi.first_byte) == Outcome::kPass);
  // The lower edge was reached by walking: every byte from 0.101 up to it passes.
  CHECK(lo.lower_zone_maximal);
  CHECK(lo.lower_zone_to == lo.last_byte);
  // The JSON carries the byte boundaries.
  nlohmann::ordered_json j = ScanJson(TraceSummary{"resnet32", baseline}, scan);
  const auto& jv = j["inversions"][0];
  CHECK(jv["feasible_below"].get<double>() == 0.101);
  CHECK(jv["oom_from"].get<double>() == 0.102);
  CHECK(jv["oom_to"].get<double>() == 0.106);
  CHECK(jv["feasible_above"].get<double>() == 0.107);
  CHECK(jv["last_feasible_byte"].get<int64_t>() == lo.last_byte);
  CHECK(jv["first_oom_byte"].get<int64_t>() == lo.first_byte);
  CHECK(jv["last_oom_byte"].get<int64_t>() == hi.last_byte);
  CHECK(jv["first_feasible_byte"].get<int64_t>() == hi.first_byte);
  // The OOM budgets of the inversion share one regime, apart from the passing ones.
  CHECK(scan.points[v.oom_from].regime == scan.points[v.oom_to].regime);
  CHECK(scan.points[v.oom_from].regime != scan.points[v.feasible_below].regime);
}

// The exact scan (ScanOptions::exact): the atlas over the grid's range.

ScanResult ExactScan(const Trace& trace, const Baseline& baseline, const char* ratios) {
  ScanOptions options = Dtr();
  options.exact = true;
  return ScanInstability(trace, baseline, ParseRatios(ratios), options);
}

TEST_CASE(
    "exact scan: inversion5's hole 40..46 is found with its bytes, also when the grid misses it") {
  Trace trace = Inversion5();
  Baseline baseline = ComputeBaseline(trace);
  REQUIRE(baseline.memory == 57);
  // Budgets int(57 * r): 28 (OOM), 39 (pass), 51 (pass): no grid point in the hole.
  ScanResult coarse = ExactScan(trace, baseline, "0.5:0.9:0.2");
  REQUIRE(coarse.points.size() == 3);
  CHECK(coarse.points[0].budget == 28);
  CHECK(coarse.points[2].budget == 51);
  CHECK(coarse.analysis.inversions.empty());
  REQUIRE(coarse.atlas.has_value());
  CHECK(coarse.atlas->lo == 28);
  CHECK(coarse.atlas->hi == 51);
  // 20..29, 30..36, 37..39, 40..46, 47..56 clipped to [28, 51].
  CHECK(coarse.atlas->intervals.size() == 5);
  REQUIRE(coarse.exact_inversions.size() == 1);
  const ExactInversion& v = coarse.exact_inversions[0];
  CHECK(v.last_feasible_byte == 39);
  CHECK(v.first_oom_byte == 40);
  CHECK(v.last_oom_byte == 46);
  CHECK(v.first_feasible_byte == 47);
  CHECK(v.oom_width() == 7);
  CHECK(v.missed_by_grid());
  // The one regime change of the grid, OOM at 0.5 -> pass at 0.7, is at 36 | 37.
  REQUIRE(coarse.regime_changes.size() == 1);
  CHECK(coarse.regime_changes[0].boundary.last_byte == 36);
  CHECK(coarse.regime_changes[0].boundary.first_byte == 37);
  CHECK(coarse.regime_changes[0].boundary.sharp());
  // Grid points come from the atlas, not from their own replays: same numbers.
  double overhead = 0;
  CHECK(ReplayAt(trace, baseline, 39, &overhead) == Outcome::kPass);
  CHECK(coarse.points[1].overhead == overhead);
  CHECK(coarse.points[1].outcome == Outcome::kPass);

  // Budgets 34 (OOM), 39 (pass), 45 (OOM), 51 (pass): the grid sees it.
  ScanResult fine = ExactScan(trace, baseline, "0.6:0.9:0.1");
  REQUIRE(fine.analysis.inversions.size() == 1);
  const ScanInversion& g = fine.analysis.inversions[0];
  REQUIRE(g.lower_edge.has_value());
  REQUIRE(g.upper_edge.has_value());
  CHECK(g.lower_edge->last_byte == 39);
  CHECK(g.lower_edge->first_byte == 40);
  CHECK(g.upper_edge->last_byte == 46);
  CHECK(g.upper_edge->first_byte == 47);
  CHECK(g.lower_edge->sharp());
  CHECK(g.upper_edge->sharp());
  CHECK(g.lower_edge->replays == 0);
  REQUIRE(fine.exact_inversions.size() == 1);
  CHECK(fine.exact_inversions[0].grid_inversion == size_t{0});
  CHECK(ReplayAt(trace, baseline, 39) == Outcome::kPass);
  CHECK(ReplayAt(trace, baseline, 40) == Outcome::kOom);
  CHECK(ReplayAt(trace, baseline, 46) == Outcome::kOom);
  CHECK(ReplayAt(trace, baseline, 47) == Outcome::kPass);
  // JSON: the grid's ratios and bytes, and the exact list.
  nlohmann::ordered_json j = ScanJson(TraceSummary{"inversion5", baseline}, fine);
  CHECK(j["exact"] == true);
  CHECK(j["inversions"][0]["feasible_below"].get<double>() == 0.7);
  CHECK(j["inversions"][0]["last_feasible_byte"] == 39);
  CHECK(j["inversions"][0]["first_feasible_byte"] == 47);
  CHECK(j["exact_inversions"][0]["first_oom_byte"] == 40);
  CHECK(j["exact_inversions"][0]["missed_by_grid"] == false);
  CHECK(j["exact_inversions"][0]["oom_from"].get<double>() == 40.0 / 57);
}

TEST_CASE(
    "exact scan: boundaries equal what --refine finds by replays (remat4's cliff, inversion5)") {
  for (auto [trace, ratios, factor] : {std::tuple{Remat4(), "0.5,0.8,0.9,1.0", 1.1},
                                       std::tuple{Inversion5(), "0.6:0.9:0.1", 1.5}}) {
    Baseline baseline = ComputeBaseline(trace);
    ScanOptions refine = Dtr(), exact = Dtr();
    refine.refine = true;
    exact.exact = true;
    refine.cliff_factor = exact.cliff_factor = factor;
    ScanResult a = ScanInstability(trace, baseline, ParseRatios(ratios), refine);
    ScanResult b = ScanInstability(trace, baseline, ParseRatios(ratios), exact);
    REQUIRE(a.analysis.cliffs.size() == b.analysis.cliffs.size());
    REQUIRE(a.analysis.inversions.size() == b.analysis.inversions.size());
    CHECK(a.analysis.cliffs.size() + a.analysis.inversions.size() == 1);
    std::vector<std::pair<const ScanBoundary*, const ScanBoundary*>> pairs;
    for (size_t i = 0; i < a.analysis.cliffs.size(); ++i)
      pairs.push_back({&*a.analysis.cliffs[i].boundary, &*b.analysis.cliffs[i].boundary});
    for (size_t i = 0; i < a.analysis.inversions.size(); ++i) {
      pairs.push_back(
          {&*a.analysis.inversions[i].lower_edge, &*b.analysis.inversions[i].lower_edge});
      pairs.push_back(
          {&*a.analysis.inversions[i].upper_edge, &*b.analysis.inversions[i].upper_edge});
    }
    for (auto [x, y] : pairs) {
      CHECK(x->last_byte == y->last_byte);
      CHECK(x->first_byte == y->first_byte);
      CHECK(x->sharp() == y->sharp());
      CHECK(x->below.outcome == y->below.outcome);
      CHECK(x->above.overhead == y->above.overhead);
    }
  }
  ScanOptions both = Dtr();
  both.refine = both.exact = true;
  CHECK_THROWS_AS(
      ScanInstability(Remat4(), ComputeBaseline(Remat4()), ParseRatios("0.5,0.8"), both), Error);
}

TEST_CASE("exact scan: ResNet-32 128-byte hole above ratio 0.1063, seen and missed by grids") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  // Budgets 1069692494 (pass), 1069692997 (OOM), 1069694506 (pass).
  ScanResult seen = ExactScan(trace, baseline, "0.1063188,0.10631885,0.106319");
  REQUIRE(seen.analysis.inversions.size() == 1);
  REQUIRE(seen.exact_inversions.size() == 1);
  const ExactInversion& v = seen.exact_inversions[0];
  CHECK(v.grid_inversion == size_t{0});
  CHECK(v.oom_width() == 128);
  const ScanInversion& g = seen.analysis.inversions[0];
  CHECK(g.lower_edge->last_byte == v.last_feasible_byte);
  CHECK(g.lower_edge->first_byte == v.first_oom_byte);
  CHECK(g.upper_edge->last_byte == v.last_oom_byte);
  CHECK(g.upper_edge->first_byte == v.first_feasible_byte);
  // Plain replays on both sides of both edges.
  CHECK(ReplayAt(trace, baseline, v.last_feasible_byte) == Outcome::kPass);
  CHECK(ReplayAt(trace, baseline, v.first_oom_byte) == Outcome::kOom);
  CHECK(ReplayAt(trace, baseline, v.last_oom_byte) == Outcome::kOom);
  CHECK(ReplayAt(trace, baseline, v.first_feasible_byte) == Outcome::kPass);
  // Both grid points pass: a sweep sees nothing, the exact scan the same hole.
  ScanResult missed = ExactScan(trace, baseline, "0.1063188,0.106319");
  CHECK(missed.analysis.inversions.empty());
  REQUIRE(missed.exact_inversions.size() == 1);
  CHECK(missed.exact_inversions[0].missed_by_grid());
  CHECK(missed.exact_inversions[0].first_oom_byte == v.first_oom_byte);
  CHECK(missed.exact_inversions[0].last_oom_byte == v.last_oom_byte);
}

// Slow (the atlas of 0.100-0.108 is ~620 replays, 10-20 s): run with
//   build/dtrcheck_tests -tc='*0.100-0.108*' --no-skip
TEST_CASE("exact scan: ResNet-32 0.100-0.108 gives the inversion and four holes the grid missed" *
          doctest::skip()) {
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  ScanResult scan = ExactScan(trace, baseline, "0.100:0.108:0.001");
  REQUIRE(scan.analysis.inversions.size() == 1);
  const ScanInversion& g = scan.analysis.inversions[0];
  CHECK(scan.points[g.feasible_below].ratio->text == "0.101");
  CHECK(scan.points[g.feasible_above].ratio->text == "0.107");
  REQUIRE(scan.exact_inversions.size() == 5);
  const ExactInversion& big = scan.exact_inversions[0];
  CHECK(big.grid_inversion == size_t{0});
  CHECK(g.lower_edge->last_byte == big.last_feasible_byte);
  CHECK(g.lower_edge->first_byte == big.first_oom_byte);
  CHECK(g.upper_edge->last_byte == big.last_oom_byte);
  CHECK(g.upper_edge->first_byte == big.first_feasible_byte);
  for (size_t i = 1; i < 5; ++i) CHECK(scan.exact_inversions[i].missed_by_grid());
  for (const ExactInversion& v : scan.exact_inversions) {
    INFO("hole ", v.first_oom_byte, "..", v.last_oom_byte);
    CHECK(ReplayAt(trace, baseline, v.last_feasible_byte) == Outcome::kPass);
    CHECK(ReplayAt(trace, baseline, v.first_oom_byte) == Outcome::kOom);
    CHECK(ReplayAt(trace, baseline, v.last_oom_byte) == Outcome::kOom);
    CHECK(ReplayAt(trace, baseline, v.first_feasible_byte) == Outcome::kPass);
  }
}

}  // namespace
}  // namespace dtr::testing
