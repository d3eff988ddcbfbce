// The report's atlas walk within a budget of replays (diagnose/atlas_coverage.h)
// and the rows it adds to the grid (diagnose/grid_refinement.h), on the demo
// (whose hole [5767168, 6291455] lies between ratios 0.49 and 0.55) and on
// hand-made coverages.
#include <doctest/doctest.h>

#include "checker/engine/heuristic.h"
#include "checker/engine/replay.h"
#include "diagnose/atlas_coverage.h"
#include "diagnose/grid_refinement.h"
#include "model/trace_parser.h"
#include "traces/demo.h"

namespace dtr::testing {
namespace {

ScanPoint Point(int64_t budget, Outcome outcome, double overhead = 1.5) {
  ScanPoint p;
  p.budget = budget;
  p.outcome = outcome;
  p.overhead = overhead;
  return p;
}

AtlasInterval Interval(int64_t lo, int64_t hi, Outcome outcome, double overhead = 1.5) {
  AtlasInterval iv;
  iv.lo = lo;
  iv.hi = hi;
  iv.run_lo = lo;
  iv.run_hi = hi;
  iv.behaviour.outcome = outcome;
  iv.overhead = overhead;
  return iv;
}

// One complete section over [lo, hi] made of `intervals`.
AtlasCoverage Covering(std::vector<AtlasInterval> intervals) {
  AtlasCoverage c;
  c.lo = intervals.front().lo;
  c.hi = intervals.back().hi;
  BudgetAtlas s;
  s.lo = c.lo;
  s.hi = c.hi;
  s.covered = c.hi - c.lo + 1;
  s.intervals = std::move(intervals);
  s.summary = SummarizeAtlas(s.intervals);
  c.sections.push_back(std::move(s));
  return c;
}

TEST_CASE("WalkAtlasWithin walks outcome changes first, then up from the first pass") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  Baseline baseline = ComputeBaseline(trace);
  RunSpec spec;
  spec.heuristic = &FindHeuristic("DTR");
  auto point = [&](const char* ratio) {
    RunSpec s = spec;
    s.ratio = ParseRatio(ratio);
    RunRecord r = RunOne(trace, baseline, s);
    return Point(r.result.budget, r.result.outcome, r.overhead);
  };
  // 0.2 fails, 0.49 and 0.55 pass (the hole lies between), 0.9 passes.
  std::vector<ScanPoint> grid = {point("0.2"), point("0.49"), point("0.55"), point("0.9")};
  REQUIRE(grid[0].outcome == Outcome::kOom);
  AtlasCoverage all = WalkAtlasWithin(trace, baseline, spec, grid, {.runs = 100000}, 2);
  REQUIRE(all.windows.size() == 3);
  CHECK(all.windows[0].reason == WindowReason::kOutcomeChange);
  CHECK(all.windows[0].lo == grid[0].budget);
  CHECK(all.windows[1].reason == WindowReason::kAboveFirstPass);
  CHECK(all.windows[1].lo == grid[1].budget);
  CHECK(all.windows[2].lo == grid[2].budget);
  CHECK(all.complete());
  CHECK_FALSE(all.budget_ran_out);
  CHECK(all.covered() == grid[3].budget - grid[0].budget + 1);
  CHECK(all.Gaps().empty());
  // The sections are the atlas of the whole range, as one walk finds it.
  BudgetAtlas direct = BuildAtlas(trace, baseline, spec, grid[0].budget, grid[3].budget, 1);
  REQUIRE(all.sections[0].intervals.size() == direct.intervals.size());
  for (size_t i = 0; i < direct.intervals.size(); ++i) {
    CHECK(all.sections[0].intervals[i].lo == direct.intervals[i].lo);
    CHECK(all.sections[0].intervals[i].behaviour.outcome == direct.intervals[i].behaviour.outcome);
  }
  bool hole = false;
  for (const auto& [lo, hi] : all.Infeasible()) hole |= lo == 5767168 && hi == 6291455;
  CHECK(hole);

  SUBCASE("a budget that runs out leaves the later windows unwalked, the same for any jobs") {
    const size_t first = all.windows[0].replays;
    AtlasCoverage part = WalkAtlasWithin(trace, baseline, spec, grid, {.runs = first + 3}, 2);
    AtlasCoverage one = WalkAtlasWithin(trace, baseline, spec, grid, {.runs = first + 3}, 1);
    CHECK(part.budget_ran_out);
    CHECK(part.replays == first + 3);
    CHECK(part.windows[0].complete());
    CHECK(part.windows[1].replays == 3);
    CHECK_FALSE(part.windows[1].complete());
    CHECK(part.windows[2].replays == 0);
    CHECK(part.sections.size() == 1);
    CHECK(part.sections[0].lo == grid[0].budget);
    CHECK(part.sections[0].hi == grid[1].budget + part.windows[1].walked_bytes - 1);
    REQUIRE(part.Gaps().size() == 1);
    CHECK(part.Gaps()[0].second == grid[3].budget);
    REQUIRE(one.sections.size() == part.sections.size());
    CHECK(one.sections[0].hi == part.sections[0].hi);
    CHECK(one.sections[0].intervals.size() == part.sections[0].intervals.size());
  }
}

TEST_CASE("RefineGrid puts a decimal zoom grid over a wide hole and edge bytes on a narrow one") {
  const int64_t base = 1000000;  // ratio r is budget r * 1e6
  // Passing everywhere in [100000, 120000] but for OOM at [101800, 106300]
  // (a wide hole, between grid points 0.10 and 0.12) and [110010, 110050]
  // (41 bytes: no ratio of 4 decimals falls inside it).
  AtlasCoverage c = Covering({Interval(100000, 101799, Outcome::kPass),
                              Interval(101800, 106300, Outcome::kOom),
                              Interval(106301, 110009, Outcome::kPass),
                              Interval(110010, 110050, Outcome::kOom),
                              Interval(110051, 120000, Outcome::kPass)});
  std::vector<ScanPoint> grid = {Point(100000, Outcome::kPass), Point(120000, Outcome::kPass)};
  ScanAnalysis none;
  std::vector<GridAddition> added = RefineGrid(c, grid, none, base, 1.25);
  std::vector<std::string> zoom;
  std::vector<int64_t> edges;
  for (const GridAddition& a : added) {
    if (a.source != RowSource::kZoomGrid) {
      edges.push_back(a.budget);
      continue;
    }
    REQUIRE(a.ratio);
    zoom.push_back(a.ratio->text);
    CHECK(BudgetForRatio(base, a.ratio->value) == a.budget);  // as simrd turns a ratio into bytes
  }
  // 0.101 to 0.107 in steps of 0.001: five inside the hole, one each side.
  CHECK(zoom == std::vector<std::string>{"0.101", "0.102", "0.103", "0.104", "0.105", "0.106", "0.107"});
  // The narrow hole: last pass, first and last OOM, first pass.
  CHECK(edges == std::vector<int64_t>{110009, 110010, 110050, 110051});

  SUBCASE("a hole the grid already samples gets nothing; the limit drops whole groups") {
    std::vector<ScanPoint> sampled = {Point(100000, Outcome::kPass), Point(104000, Outcome::kOom),
                                      Point(120000, Outcome::kPass)};
    std::vector<GridAddition> more = RefineGrid(c, sampled, none, base, 1.25);
    for (const GridAddition& a : more) CHECK(a.source == RowSource::kEdge);
    CHECK(more.size() == 4);
    RefineLimits few;
    few.max_budgets = 5;
    std::vector<GridAddition> capped = RefineGrid(c, grid, none, base, 1.25, few);
    CHECK(capped.size() == 4);  // the zoom grid (7) does not fit; the edges do
  }
  SUBCASE("a cliff of the atlas gets its two edge bytes") {
    AtlasCoverage cliff = Covering({Interval(100000, 104999, Outcome::kPass, 4.0),
                                    Interval(105000, 120000, Outcome::kPass, 2.0)});
    std::vector<GridAddition> at = RefineGrid(cliff, grid, none, base, 1.25);
    REQUIRE(at.size() == 2);
    CHECK(at[0].budget == 104999);
    CHECK(at[1].budget == 105000);
  }
}

}  // namespace
}  // namespace dtr::testing
