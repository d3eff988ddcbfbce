// bounds on tiny traces: the proven lower bound never passes the optimum
// found by exhaustive search, and the best verified schedule never beats it.
#include "diagnose/feasibility_bounds.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "checker/proofs/exhaustive_search.h"
#include "checker/proofs/memory_bound.h"
#include "checker/proofs/schedule_checker.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

// A random tiny trace, its optimum by exhaustive search, and its bounds under
// `o`; nullopt when a heuristic run stopped where simrd asserts (the trace then
// has nothing to check).
struct TinyBounds {
  Trace trace;
  int64_t optimum = 0;
  BoundsReport report;
};
std::optional<TinyBounds> BoundsOfTinyTrace(uint64_t seed, int storages, const BoundsOptions& o) {
  TinyBounds t;
  t.trace = RandomTinyTrace(seed, storages);
  t.optimum = SmallestFeasibleBudget(t.trace);
  REQUIRE(t.optimum > 0);
  try {
    t.report = ComputeBounds(t.trace, ComputeBaseline(t.trace), o);
  } catch (const Error&) {
    return std::nullopt;
  }
  return t;
}

TEST_CASE("bounds: proven bound <= optimum <= best verified schedule on tiny traces") {
  BoundsOptions o;
  o.heuristics = {&FindHeuristic("DTR"), &FindHeuristic("LRU")};
  o.grid = "0.05:1:0.05";
  o.fine_step = "0.01";
  o.jobs = 1;
  o.windows = 2;
  o.window_ops = 4;
  o.limits.timeout_seconds = 5;
  o.resolution_ratio = 0;  // bisect to the byte
  for (uint64_t seed = 200; seed < 208; ++seed) {
    INFO("seed ", seed);
    std::optional<TinyBounds> tb = BoundsOfTinyTrace(seed, 6 + static_cast<int>(seed % 4), o);
    if (!tb) continue;  // a heuristic run stopped where simrd asserts
    const int64_t optimum = tb->optimum;
    const BoundsReport& r = tb->report;
    CHECK(r.static_bound.bytes <= r.proven_infeasible_below);
    CHECK(r.proven_infeasible_below <= optimum);
    for (const WindowBound& w : r.windows) CHECK(w.infeasible_below <= optimum);
    if (r.best) {
      CHECK(r.best->check.passed());
      CHECK(r.best->budget >= optimum);
    }
    for (const HeuristicBound& h : r.heuristics)
      if (h.smallest_feasible) CHECK(h.peak_there >= optimum);
  }
}

// A coarse grid without refinement, no Z3 windows, one thread: the best grid
// run stays well above the optimum of a tiny trace, leaving the walk-down a
// gap to close, in at most `walk_searches` searches and no time limit.
BoundsOptions CoarseGrid(int32_t walk_searches) {
  BoundsOptions o;
  o.grid = "0.5:1:0.25";
  o.fine_step = "";
  o.jobs = 1;
  o.windows = 0;
  o.limits.timeout_seconds = 5;
  o.walk_searches = walk_searches;
  o.plan_seconds = 0;  // the walk-down alone
  return o;
}

TEST_CASE("bounds walk-down: lowers the best grid run, never below the exhaustive optimum") {
  // A coarse grid without refinement leaves the best grid run well above the
  // optimum; the walk-down (prove's witness search one byte below the best
  // peak, or further below while it keeps finding) must close some of that
  // gap, and every schedule
  // it reports passes the checker at its own peak.
  BoundsOptions o = CoarseGrid(1000);
  int lowered = 0, tried = 0;
  for (uint64_t seed = 300; seed < 316; ++seed)
    for (WalkMode mode : {WalkMode::kStep, WalkMode::kGallop}) {
      INFO("seed ", seed, " walk ", WalkModeName(mode));
      o.walk = mode;
      std::optional<TinyBounds> tb = BoundsOfTinyTrace(seed, 7 + static_cast<int>(seed % 3), o);
      if (!tb) continue;  // a heuristic run stopped where simrd asserts
      const Trace& trace = tb->trace;
      const int64_t optimum = tb->optimum;
      const BoundsReport& r = tb->report;
      if (!r.grid_best) continue;
      ++tried;
      REQUIRE(r.best);
      CHECK(r.best->budget <= r.grid_best->budget);
      CHECK(r.best->budget >= optimum);
      CHECK_FALSE(r.walk_timed_out);
      CHECK_FALSE(r.walk_search_limited);
      CHECK(CheckSchedule(trace, r.best->budget, r.best->script).passed());
      CHECK_FALSE(CheckSchedule(trace, r.best->budget - 1, r.best->script).passed());
      int64_t previous = r.grid_best->budget;
      for (const WalkStep& s : r.walk) {
        CHECK(s.budget < previous);  // below the best so far
        if (!s.found) continue;
        CHECK(s.peak <= s.budget);
        CHECK(s.peak >= optimum);
        previous = s.peak;
      }
      // The walk stops at a failed search one byte below the best, or at the
      // proven bound.
      if (r.best->budget > r.proven_infeasible_below) {
        REQUIRE_FALSE(r.walk.empty());
        CHECK_FALSE(r.walk.back().found);
        CHECK(r.walk.back().budget == r.best->budget - 1);
      }
      if (r.best->budget < r.grid_best->budget) {
        ++lowered;
        CHECK(r.best->heuristic == nullptr);
        CHECK(r.best->source != "grid run");
      }
    }
  CHECK(tried >= 16);
  CHECK(lowered >= 8);
}

TEST_CASE("bounds walk-down: --walk-searches 0 or --search-seconds 0 keeps the best grid run") {
  for (bool by_seconds : {false, true}) {
    INFO("by --search-seconds: ", by_seconds);
    BoundsOptions o = CoarseGrid(by_seconds ? 1000 : 0);
    if (by_seconds) o.search_seconds = 0;
    Trace trace = RandomTinyTrace(301, 8);
    BoundsReport r = ComputeBounds(trace, ComputeBaseline(trace), o);
    REQUIRE(r.grid_best);
    CHECK(r.walk.empty());
    CHECK(r.best->budget == r.grid_best->budget);
    CHECK(r.best->source == "grid run");
  }
}

TEST_CASE(
    "bounds walk-down: stops after --walk-searches searches, with the same answer each time") {
  // Unlimited, the walk takes more than two searches on some of these traces;
  // limited to two, it takes the first two of them and says why it stopped.
  int limited = 0;
  for (uint64_t seed = 300; seed < 316; ++seed) {
    INFO("seed ", seed);
    const int ops = 7 + static_cast<int>(seed % 3);
    std::optional<TinyBounds> all = BoundsOfTinyTrace(seed, ops, CoarseGrid(1000));
    if (!all || all->report.walk.size() <= 2) continue;
    ++limited;
    std::optional<TinyBounds> two = BoundsOfTinyTrace(seed, ops, CoarseGrid(2));
    REQUIRE(two);
    const BoundsReport& r = two->report;
    REQUIRE(r.walk.size() == 2);
    CHECK(r.walk_search_limited);
    CHECK_FALSE(r.walk_timed_out);
    for (size_t i = 0; i < 2; ++i) {
      CHECK(r.walk[i].budget == all->report.walk[i].budget);
      CHECK(r.walk[i].found == all->report.walk[i].found);
      CHECK(r.walk[i].peak == all->report.walk[i].peak);
    }
    REQUIRE(r.best);
    CHECK(r.best->budget >= all->report.best->budget);
  }
  CHECK(limited >= 2);
}

TEST_CASE("bounds walk-down, bisect: never below the exhaustive optimum") {
  BoundsOptions o = CoarseGrid(1000);
  o.walk = WalkMode::kBisect;
  o.resolution_ratio = 0;
  for (uint64_t seed = 300; seed < 306; ++seed) {
    INFO("seed ", seed);
    std::optional<TinyBounds> tb = BoundsOfTinyTrace(seed, 7 + static_cast<int>(seed % 3), o);
    if (!tb) continue;  // a heuristic run stopped where simrd asserts
    const Trace& trace = tb->trace;
    const int64_t optimum = tb->optimum;
    const BoundsReport& r = tb->report;
    if (!r.best) continue;
    CHECK(r.best->budget >= optimum);
    CHECK(CheckSchedule(trace, r.best->budget, r.best->script).passed());
    for (const WalkStep& s : r.walk)
      if (s.found) CHECK(s.peak >= optimum);
  }
}

TEST_CASE("bounds: checkpoint plans lower the best schedule, never below the exhaustive optimum") {
  BoundsOptions o = CoarseGrid(0);
  o.plan_seconds = 30;
  int lowered = 0, tried = 0;
  for (uint64_t seed = 300; seed < 316; ++seed) {
    INFO("seed ", seed);
    std::optional<TinyBounds> tb = BoundsOfTinyTrace(seed, 7 + static_cast<int>(seed % 3), o);
    if (!tb) continue;  // a heuristic run stopped where simrd asserts
    const BoundsReport& r = tb->report;
    REQUIRE(r.plan_search);
    if (!r.grid_best || !r.plan_search->best) continue;
    ++tried;
    REQUIRE(r.best);
    CHECK(r.best->budget <= r.grid_best->budget);
    CHECK(r.best->budget >= tb->optimum);
    CHECK(CheckSchedule(tb->trace, r.best->budget, r.best->script).passed());
    if (r.best->budget < r.grid_best->budget) {
      ++lowered;
      CHECK(r.best->source == "checkpoint plan");
      CHECK(r.best->budget == r.plan_search->best->peak);
    }
  }
  CHECK(tried >= 12);
  CHECK(lowered >= 4);
}

TEST_CASE("bounds: --plans-only runs no heuristic and no walk-down") {
  BoundsOptions o = CoarseGrid(1000);
  o.plan_seconds = 30;
  o.plans_only = true;
  Trace trace = RandomTinyTrace(301, 8);
  BoundsReport r = ComputeBounds(trace, ComputeBaseline(trace), o);
  CHECK(r.heuristics.empty());
  CHECK_FALSE(r.grid_best);
  CHECK(r.walk.empty());
  REQUIRE(r.best);
  CHECK(r.best->source == "checkpoint plan");
  CHECK(r.best->budget >= SmallestFeasibleBudget(trace));
}

TEST_CASE("bounds: grid runs past --run-max-evals are unknown, not OOM, and not the first pass") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  const Baseline baseline = ComputeBaseline(trace);
  BoundsOptions o = CoarseGrid(0);
  o.grid = "0.09:0.12:0.005";
  o.jobs = 2;
  o.cut_seconds = 0;
  o.run_max_evals = 0;
  const BoundsReport all = ComputeBounds(trace, baseline, o);
  REQUIRE(all.heuristics.size() == 1);
  const HeuristicBound& full = all.heuristics[0];
  CHECK(full.stopped.empty());
  REQUIRE(full.smallest_feasible);
  // The work of each grid run, by replaying it: a cap between the cheapest
  // and the dearest stops exactly the runs above it.
  std::vector<std::pair<double, int64_t>> work;
  for (const Ratio& r : ParseRatios(o.grid)) {
    RunSpec s;
    s.heuristic = &FindHeuristic("DTR");
    s.ratio = r;
    const RunResult res = RunOne(trace, baseline, s).result;
    work.emplace_back(r.value, res.heuristic_evals + res.events);
  }
  std::vector<int64_t> sorted;
  for (const auto& [ratio, w] : work) sorted.push_back(w);
  std::sort(sorted.begin(), sorted.end());
  o.run_max_evals = sorted[sorted.size() / 2];
  const BoundsReport capped = ComputeBounds(trace, baseline, o);
  const HeuristicBound& b = capped.heuristics[0];
  std::vector<double> expect_stopped;
  for (const auto& [ratio, w] : work)
    if (w > o.run_max_evals) expect_stopped.push_back(ratio);
  std::vector<double> stopped;
  for (const Ratio& r : b.stopped) stopped.push_back(r.value);
  // A run that stops did more work than the cap; one that did not is unchanged.
  for (double r : stopped)
    CHECK(std::find(expect_stopped.begin(), expect_stopped.end(), r) != expect_stopped.end());
  CHECK_FALSE(stopped.empty());
  for (const Ratio& r : b.oom_above) {
    CHECK(std::find(stopped.begin(), stopped.end(), r.value) == stopped.end());
    CHECK(std::find_if(full.oom_above.begin(), full.oom_above.end(),
                       [&](const Ratio& x) { return x.value == r.value; }) != full.oom_above.end());
  }
  if (b.smallest_feasible) {
    CHECK(b.smallest_feasible->value >= full.smallest_feasible->value);
    CHECK(std::find(stopped.begin(), stopped.end(), b.smallest_feasible->value) == stopped.end());
  }
}

// The fine grid refines below the first pass only when the grid run just
// below it ended: between a run stopped at the cap and the pass, the runs
// thrash alike.
TEST_CASE("bounds: no fine grid below the first pass when the run below it stopped") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  const Baseline baseline = ComputeBaseline(trace);
  BoundsOptions o = CoarseGrid(0);
  o.grid = "0.08:0.12:0.01";
  o.fine_step = "0.001";
  o.jobs = 2;
  o.cut_seconds = 0;
  auto work = [&](const char* ratio) {
    RunSpec s;
    s.heuristic = &FindHeuristic("DTR");
    s.ratio = ParseRatio(ratio);
    const RunResult res = RunOne(trace, baseline, s).result;
    return std::make_pair(res.outcome, res.heuristic_evals + res.events);
  };
  const auto [below_outcome, below_work] = work("0.09");
  const auto [pass_outcome, pass_work] = work("0.1");
  REQUIRE(below_outcome == Outcome::kOom);
  REQUIRE(pass_outcome == Outcome::kPass);
  REQUIRE(below_work > pass_work);  // a cap between stops 0.09 and not 0.1
  o.run_max_evals = 0;
  const HeuristicBound all = ComputeBounds(trace, baseline, o).heuristics.at(0);
  CHECK(all.smallest_feasible->value < 0.1);  // found below 0.1 by the fine grid
  o.run_max_evals = pass_work;
  const HeuristicBound capped = ComputeBounds(trace, baseline, o).heuristics.at(0);
  CHECK(std::any_of(capped.stopped.begin(), capped.stopped.end(),
                    [](const Ratio& r) { return r.text == "0.09"; }));
  CHECK(capped.smallest_feasible->value == doctest::Approx(0.1));
  // 5 coarse runs, then 0.101 .. 0.109 above the pass, none of 0.091 .. 0.099.
  CHECK(all.runs == 5 + 9 + 9);
  CHECK(capped.runs == 5 + 9);
}

TEST_CASE("memory bound: the operator or the final pins that need the most") {
  // A constant k (5, pinned), a = f(k) 10, b = g(a) 20, c = h(a, b) 1; c and a
  // stay referenced and are pinned at the end.
  const char* text = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"INSTRUCTION":"CONSTANT","NAME":"k"}
{"INSTRUCTION":"MEMORY","MEMORY":"5","NAME":"k"}
{"ARGS":["k"],"INSTRUCTION":"CALL","NAME":"f","RESULT":["a"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"a"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"a"}
{"ARGS":["a"],"INSTRUCTION":"CALL","NAME":"g","RESULT":["b"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"20","NAME":"b"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"b"}
{"ARGS":["a","b","a"],"INSTRUCTION":"CALL","NAME":"h","RESULT":["c"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"1","NAME":"c"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"c"}
{"INSTRUCTION":"RELEASE","NAME":"b"}
)";
  Trace t = ParseTraceString(text, "bound.log");
  MemoryBound b = ComputeMemoryBound(t);
  // h: pinned k 5 + a 10 + b 20 (a counted once) + c 1 = 36.
  CHECK(b.bytes == 36);
  CHECK(t.ops[b.attained_by.op].name == "h/3");
  CHECK(b.attained_by.pinned == 5);
  CHECK(b.attained_by.arguments == 30);
  CHECK(b.attained_by.request == 1);
  CHECK(b.per_op[1].total() == 5 + 10);  // f: k is an argument and pinned: counted once
  CHECK(b.final_pinned == 5 + 10 + 1);   // k, a, c
  CHECK(SmallestFeasibleBudget(t) >= b.bytes);
}

}  // namespace
}  // namespace dtr::testing
