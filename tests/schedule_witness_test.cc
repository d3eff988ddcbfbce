// The witness search's Z3 window (diagnose/schedule_witness.h): planned from
// the explained run's own state before the failing operator (rebuilt with
// ScriptedStateBeforeStep), followed by the heuristic; every witness it reports
// passes the schedule checker. The other sources are exercised through the
// classification tests (tests/oom_classification_test.cc).
#include "diagnose/schedule_witness.h"

#include <doctest/doctest.h>

#include "checker/exhaustive_search.h"
#include "checker/heuristic.h"
#include "checker/schedule_checker.h"
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

}  // namespace
}  // namespace dtr::testing
