// The schedule search from the top: its best script passes the checker at
// its own peak, never beats exhaustive search on tiny traces, and keeps to an
// overhead limit.
#include "diagnose/schedule_search.h"

#include <doctest/doctest.h>

#include <cmath>

#include "checker/proofs/exhaustive_search.h"
#include "diagnose/schedule_witness.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"
#include "traces/generators.h"

namespace dtr::testing {
namespace {

TEST_CASE("schedule search: the best script passes at its peak, never below the optimum") {
  for (uint64_t seed = 400; seed < 430; ++seed) {
    INFO("seed ", seed);
    Trace t = RandomTinyTrace(seed, 5 + static_cast<int>(seed % 5));
    const int64_t optimum = SmallestFeasibleBudget(t);
    REQUIRE(optimum >= 0);
    Baseline b;
    try {
      b = ComputeBaseline(t);
    } catch (const Error&) {
      continue;  // simrd asserts in the baseline run
    }
    ScheduleSearchOptions o;
    o.seconds = 0;
    ScheduleSearch s;
    try {
      s = SearchRetentionPlans(t, b, o);
    } catch (const Error& e) {
      // Only a state where simrd asserts may stop it, never an unverified script.
      CHECK(std::string(e.what()).find("internal error") == std::string::npos);
      continue;
    }
    REQUIRE(s.best);
    CHECK(s.best->check.passed());
    CHECK(s.best->check.budget == s.best->peak);
    CHECK(s.best->check.run.max_memory == s.best->peak);
    CHECK(s.best->peak >= optimum);
    CHECK(!s.attempts.empty());
    CHECK(!s.timed_out);
  }
}

TEST_CASE("schedule search: an overhead limit trades memory for compute on a chain") {
  ChainOptions co;
  co.layers = 256;
  co.size = 1000;
  Trace t = ParseTraceString(GenerateChain(co), "chain.log");
  Baseline b = ComputeBaseline(t);
  ScheduleSearchOptions o;
  o.seconds = 0;
  ScheduleSearch free = SearchRetentionPlans(t, b, o);
  REQUIRE(free.best);
  CHECK(free.best->peak <= 4 * co.size);  // a few tensors, recomputed from the input
  o.max_overhead = 2;
  ScheduleSearch limited = SearchRetentionPlans(t, b, o);
  REQUIRE(limited.best);
  CHECK(limited.best->overhead <= 2);
  CHECK(limited.best->peak > free.best->peak);
  CHECK(limited.best->peak <= 4 * 16 * co.size);  // a few sqrt(256) tensors, far below 258
  bool refused = false;
  for (const PlanAttempt& a : limited.attempts)
    refused |= a.stopped.find("above the limit 2") != std::string::npos;
  CHECK(refused);
}

TEST_CASE("schedule search: a work limit stops it at the same plan every time") {
  ChainOptions co;
  co.layers = 64;
  Trace t = ParseTraceString(GenerateChain(co), "chain.log");
  Baseline b = ComputeBaseline(t);
  ScheduleSearchOptions o;
  o.seconds = 0;
  ScheduleSearch whole = SearchRetentionPlans(t, b, o);
  REQUIRE(whole.attempts.size() > 4);
  CHECK_FALSE(whole.work_limited);
  // A third of the whole search's work: cut partway, at a count.
  o.max_work = whole.work / 3;
  ScheduleSearch cut = SearchRetentionPlans(t, b, o);
  CHECK(cut.work_limited);
  CHECK(cut.work <= o.max_work);
  CHECK(cut.work < whole.work);
  CHECK(cut.attempts.size() <= whole.attempts.size());
  ScheduleSearch again = SearchRetentionPlans(t, b, o);
  CHECK(again.work == cut.work);
  REQUIRE(again.attempts.size() == cut.attempts.size());
  for (size_t i = 0; i < cut.attempts.size(); ++i) {
    CHECK(again.attempts[i].description == cut.attempts[i].description);
    CHECK(again.attempts[i].peak == cut.attempts[i].peak);
  }
  REQUIRE(cut.best);
  REQUIRE(again.best);
  CHECK(again.best->peak == cut.best->peak);
}

TEST_CASE("schedule search: RuntimeV1 is refused") {
  Trace t = RandomTinyTrace(1, 5);
  ScheduleSearchOptions o;
  o.runtime = RuntimeKind::kV1;
  CHECK_THROWS_WITH_AS(SearchRetentionPlans(t, Baseline{}, o),
                       "the schedule search needs a RuntimeV2 runtime, not RuntimeV1", Error);
}

}  // namespace
}  // namespace dtr::testing

namespace dtr::testing {
namespace {

// prove's witness search with checkpoint plans on (WitnessOptions::
// plan_seconds): at the peak of the plan search's best script, the witness
// search finds a script (the plan again, unless an earlier source already
// fits), and it passes the checker at that budget.
TEST_CASE("witness search: checkpoint plans as a witness source") {
  WitnessOptions w;
  w.jumps = 0;
  w.descents = 0;
  w.counterfactuals = 0;
  w.next_use = false;
  w.use_z3 = false;
  w.plan_seconds = 10;
  int found = 0, by_plan = 0;
  for (uint64_t seed = 500; seed < 580; ++seed) {
    INFO("seed ", seed);
    Trace t = RandomTinyTrace(seed, 6 + static_cast<int>(seed % 4));
    Baseline b;
    ScheduleSearch s;
    try {
      b = ComputeBaseline(t);
      s = SearchRetentionPlans(t, b, {});
    } catch (const Error&) {
      continue;  // simrd asserts on this trace
    }
    REQUIRE(s.best);
    WitnessSearch ws;
    try {
      ws = FindScheduleWitness(t, b.memory, s.best->peak, w);
    } catch (const Error&) {
      continue;  // DTR's run at the budget stops where simrd asserts
    }
    REQUIRE(ws.witness);
    ++found;
    by_plan += ws.witness->source == "checkpoint plan";
    CHECK(CheckSchedule(t, s.best->peak, ws.witness->script).passed());
  }
  CHECK(found >= 60);
  CHECK(by_plan >= 5);  // where DTR itself does not fit
}

}  // namespace
}  // namespace dtr::testing
