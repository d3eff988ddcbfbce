// The witness search's Z3 window (diagnose/schedule_witness.h): planned from
// the explained run's own state before the failing operator (rebuilt with
// ScriptedStateBeforeStep), followed by the heuristic; every witness it reports
// passes the schedule checker. The other sources are exercised through the
// classification tests (tests/oom_classification_test.cc).
#include "diagnose/schedule_witness.h"

#include <doctest/doctest.h>

#include "checker/engine/heuristic.h"
#include "checker/proofs/exhaustive_search.h"
#include "checker/proofs/schedule_checker.h"
#include "model/error.h"
#include "tests/random_trace.h"

namespace dtr::testing {
namespace {

TEST_CASE("witness search: Z3 windows from the run's own state give verified scripts") {
  WitnessOptions only_window;
  only_window.jumps = 0;
  only_window.descents = 0;
  only_window.counterfactuals = 0;
  only_window.next_use = false;
  only_window.z3_whole_program_ops = 0;  // always a window, never the whole program
  only_window.z3_window_ops = 4;
  only_window.limits.timeout_seconds = 5;
  int windows = 0, witnesses = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    INFO("seed ", seed);
    Trace trace = RandomTinyTrace(seed, 9);
    const int64_t best = SmallestFeasibleBudget(trace);  // exhaustive search
    REQUIRE(best >= 0);
    // Budgets where some schedule fits and DTR may still run out.
    for (int64_t budget = best; budget <= best + best / 4;
         budget += std::max<int64_t>(1, best / 16)) {
      INFO("budget ", budget);
      ReplayConfig config;
      config.heuristic = &FindHeuristic("DTR");
      config.budget = budget;
      try {
        if (Replay(trace, config).outcome != Outcome::kOom) continue;
      } catch (const Error&) {
        continue;  // simrd would stop with an assertion in this run
      }
      WitnessSearch search = FindScheduleWitness(trace, best, budget, only_window);
      for (const WitnessAttempt& a : search.attempts) windows += a.source == "z3 plan";
      if (!search.witness) continue;
      CHECK(search.witness->source == "z3 plan");
      CHECK(CheckSchedule(trace, budget, search.witness->script).passed());
      ++witnesses;
    }
  }
  MESSAGE(windows, " Z3 windows tried, ", witnesses, " witnesses");
  CHECK(windows > 20);
  CHECK(witnesses > 5);
}

// The next-use policy stops after a count of computations (sized to the
// trace by default), never a time: a witness it finds within the count is
// found again; with a count of 1 it gives up and says so.
TEST_CASE("witness search: the next-use policy gives up after a count of computations") {
  WitnessOptions only_next_use;
  only_next_use.jumps = 0;
  only_next_use.descents = 0;
  only_next_use.counterfactuals = 0;
  only_next_use.use_z3 = false;
  WitnessOptions one = only_next_use;
  one.next_use_computations = 1;
  int found = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed ", seed);
    Trace trace = RandomTinyTrace(seed, 9);
    CHECK(NextUseComputationsFor(trace) == 50'000);  // tiny traces: the floor of the cap
    const int64_t best = SmallestFeasibleBudget(trace);
    REQUIRE(best >= 0);
    for (int64_t budget = best; budget <= best + best / 4; budget += std::max<int64_t>(1, best / 8)) {
      INFO("budget ", budget);
      WitnessSearch sized, capped;
      try {
        sized = FindScheduleWitness(trace, best, budget, only_next_use);
        capped = FindScheduleWitness(trace, best, budget, one);
      } catch (const Error&) {
        continue;  // simrd would stop with an assertion in the heuristic's run
      }
      if (!sized.witness || sized.witness->source != "next-use") continue;
      ++found;
      CHECK(CheckSchedule(trace, budget, sized.witness->script).passed());
      CHECK(!capped.witness);
      REQUIRE(!capped.attempts.empty());
      CHECK(capped.attempts.back().source == "next-use");
      CHECK(capped.attempts.back().outcome == "gave up after 1 computations");
    }
  }
  MESSAGE(found, " next-use witnesses");
  CHECK(found > 5);
}

}  // namespace
}  // namespace dtr::testing
