// Rising replays (checker/drivers/rising_replays.h): a run resumed from the previous
// run's checkpoint is the run replayed from the start, every field of it,
// on real traces and random ones, with checkpoints at every computation
// point (each run resumes right before its first different comparison) and
// with the default spacing; and the runs do resume.
#include <doctest/doctest.h>

#include <string>

#include "checker/drivers/rising_replays.h"
#include "checker/engine/heuristic.h"
#include "checker/farm/farm_codec.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

struct EveryPoint {
  explicit EveryPoint(bool every) { RisingReplays::set_checkpoint_every_point(every); }
  ~EveryPoint() { RisingReplays::set_checkpoint_every_point(false); }
};

// Walks up from `budget` as an atlas does, `runs` runs or to the infinite
// budget; each run must equal a fresh replay. Returns the runs that resumed.
int64_t WalkUp(const Trace& trace, ReplayConfig config, int64_t budget, int runs) {
  RisingReplays replays(trace, config);
  for (int k = 0; k < runs; ++k) {
    INFO("run ", k, " at budget ", budget);
    config.budget = budget;
    RunResult fresh;
    try {
      fresh = Replay(trace, config);
    } catch (const SimrdAssertionError&) {
      CHECK_THROWS_AS(replays.Run(budget), SimrdAssertionError);
      return replays.resumed();
    }
    const RunResult rising = replays.Run(budget);
    CHECK(rising.budget == budget);
    CHECK(rising.budget_lo <= budget);
    CHECK(rising.budget_hi >= budget);
    REQUIRE(EncodeForFarm(rising) == EncodeForFarm(fresh));
    if (fresh.budget_hi == kInfiniteBudget) break;
    budget = fresh.budget_hi + 1;
  }
  return replays.resumed();
}

ReplayConfig Config(const char* heuristic, RuntimeKind runtime = RuntimeKind::kV2EagerOptimized) {
  ReplayConfig config;
  config.runtime = runtime;
  config.heuristic = &FindHeuristic(heuristic);
  return config;
}

TEST_CASE("rising replays: a resumed run is the run from the start (U-Net, ResNet-32, LSTM)") {
  struct Case {
    const char* trace;
    double ratio;
    int runs;
  };
  for (const Case& c : {Case{"unet", 0.40, 60}, Case{"resnet32", 0.1, 40}, Case{"lstm", 0.26, 6}}) {
    Trace trace = LoadTrace(TracePath(c.trace));
    const Baseline baseline = ComputeBaseline(trace);
    const int64_t lo = BudgetForRatio(baseline.memory, c.ratio);
    for (bool every : {true, false}) {
      if (every && std::string(c.trace) == "lstm") continue;  // a copy at each of 80,000 points
      INFO(c.trace, " every point: ", every);
      EveryPoint setting(every);
      const int64_t resumed = WalkUp(trace, Config("DTR"), lo, c.runs);
      // Runs diverge at their first different comparison, almost never at
      // the very first computation point.
      CHECK(resumed >= c.runs / 2);
    }
  }
}

TEST_CASE("rising replays: random traces, heuristics and runtimes, checkpoints at every point") {
  EveryPoint setting(true);
  int64_t resumed = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    INFO("seed ", seed);
    Trace trace = RandomTrace(seed, VariedOptions(seed));
    const Baseline baseline = ComputeBaseline(trace);
    for (const char* h : {"DTR", "DTREqClass", "LRU", "RandomStorage", "MSPS"}) {
      INFO(h);
      const RuntimeKind runtime =
          seed % 2 ? RuntimeKind::kV2EagerOptimized : RuntimeKind::kV2Optimized;
      ReplayConfig config = Config(h, runtime);
      config.seed = seed;
      resumed += WalkUp(trace, config, baseline.memory / 4, 30);
    }
  }
  CHECK(resumed > 1000);
}

TEST_CASE("rising replays: a budget not after the previous run's interval starts over") {
  Trace trace = LoadTrace(TracePath("unet"));
  const Baseline baseline = ComputeBaseline(trace);
  ReplayConfig config = Config("DTR");
  RisingReplays replays(trace, config);
  const int64_t lo = BudgetForRatio(baseline.memory, 0.40);
  const RunResult first = replays.Run(lo);
  REQUIRE(first.budget_hi < kInfiniteBudget);
  // Two budgets past the interval, then back to its start: neither resumes.
  for (int64_t budget : {first.budget_hi + 2, lo}) {
    config.budget = budget;
    CHECK(EncodeForFarm(replays.Run(budget)) == EncodeForFarm(Replay(trace, config)));
  }
  CHECK(replays.resumed() == 0);
}

TEST_CASE("engine: continuing under a budget that changes a comparison is refused") {
  Trace trace = LoadTrace(TracePath("unet"));
  const Baseline baseline = ComputeBaseline(trace);
  ReplayConfig config = Config("DTR");
  config.budget = BudgetForRatio(baseline.memory, 0.40);
  ReplayState st = ReplayWithState(trace, config, 5);
  REQUIRE(st.result.outcome == Outcome::kStopped);
  Engine& e = st.engine;
  REQUIRE(e.budget_lo() <= e.budget_hi());
  CHECK_THROWS_AS(e.ContinueUnder(e.budget_hi() + 1), std::logic_error);
  CHECK_THROWS_AS(e.ContinueUnder(e.budget_lo() - 1), std::logic_error);
  e.ContinueUnder(e.budget_hi());
  CHECK(e.budget() == e.budget_hi());
}

}  // namespace
}  // namespace dtr::testing
