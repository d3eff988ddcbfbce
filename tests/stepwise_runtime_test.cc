// The stepwise runtime (checker/stepwise_runtime.h) against the engine on
// random traces: the same computations in the same states under random
// scripts, and the same state at every decision and OOM of heuristic runs
// rebuilt from their scripts. Seeds are printed on failure.
#include "checker/stepwise_runtime.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "checker/heuristic.h"
#include "checker/schedule_checker.h"
#include "model/error.h"
#include "tests/random_trace.h"

namespace dtr::testing {
namespace {

// What the engine reports of a computation, and what the stepwise runtime
// shows at its computation point.
struct ComputationView {
  int64_t event = 0;
  TensorId tensor = 0;
  bool remat = false;
  int64_t memory_usage = 0;  // with the outputs allocated
  int32_t program_step = 0;
  int32_t remat_depth = 0;
  bool operator==(const ComputationView&) const = default;
};

struct ComputationRecorder : ReplayObserver {
  std::vector<ComputationView> seen;
  void OnComputation(const Computation& c) override {
    seen.push_back({c.event, c.tensor, c.remat, c.memory_usage, c.program_step, c.remat_depth});
  }
};

struct DecisionRecorder : ReplayObserver {
  std::vector<DecisionPoint> decisions;
  void OnDecision(const DecisionPoint& d) override { decisions.push_back(d); }
};

ComputationView ViewOf(const StepwiseRuntime& rt) {
  return {rt.event(),
          rt.tensor(),
          rt.frames().back().remat,
          rt.memory() + rt.request(),
          rt.program_step(),
          static_cast<int32_t>(rt.frames().size()) - 1};
}

int32_t EvictableCount(const StepwiseRuntime& rt) {
  int32_t n = 0;
  for (StorageId s = 0; s < static_cast<StorageId>(rt.trace().storages.size()); ++s)
    n += rt.Evictable(s);
  return n;
}

TEST_CASE(
    "stepwise runtime: the engine's script mode makes the same computations under random scripts") {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    INFO("seed ", seed);
    Trace trace = RandomTrace(seed, VariedOptions(seed));
    for (bool eager : {true, false}) {
      INFO("eager ", eager);
      std::mt19937_64 rng(seed * 7 + eager);
      StepwiseRuntime rt(trace, eager);
      EvictionScript script;
      std::vector<ComputationView> expected;
      while (rt.Advance()) {
        for (StorageId s = 0; s < static_cast<StorageId>(trace.storages.size()); ++s)
          if (rt.Evictable(s) && rng() % 3 == 0) {
            rt.Evict(s);
            script.entries.push_back({rt.event(), s});
          }
        expected.push_back(ViewOf(rt));
        rt.Compute();
      }
      const int64_t peak = rt.peak_memory();
      RuntimeKind runtime = eager ? RuntimeKind::kV2EagerOptimized : RuntimeKind::kV2Optimized;
      CHECK(EagerEvictions(runtime) == eager);
      ComputationRecorder recorder;
      ScheduleCheck at_peak = CheckSchedule(trace, peak, script, runtime, &recorder);
      CHECK(at_peak.passed());
      CHECK(at_peak.run.max_memory == peak);
      CHECK(at_peak.run.events == rt.event());
      CHECK(recorder.seen == expected);
      if (peak > 0) CHECK(CheckSchedule(trace, peak - 1, script, runtime).outcome == Outcome::kOom);
    }
  }
}

TEST_CASE(
    "stepwise runtime: rebuilds the engine's state at every decision and OOM of heuristic runs") {
  const char* heuristics[] = {"DTR", "DTREqClass", "LRU", "LargestStorage", "MSPS"};
  int64_t decisions = 0, ooms = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    INFO("seed ", seed);
    Trace trace = RandomTrace(seed, VariedOptions(seed));
    Baseline baseline;
    try {
      baseline = ComputeBaseline(trace);
    } catch (const Error&) {
      continue;  // RuntimeV1 stops with a simrd assertion on this trace
    }
    const char* name = heuristics[seed % std::size(heuristics)];
    for (RuntimeKind runtime : {RuntimeKind::kV2EagerOptimized, RuntimeKind::kV2Optimized}) {
      for (double ratio : {0.5, 0.7, 0.9}) {
        INFO(name, " ", RuntimeName(runtime), " ratio ", ratio);
        ReplayConfig config;
        config.runtime = runtime;
        config.heuristic = &FindHeuristic(name);
        config.budget = BudgetForRatio(baseline.memory, ratio);
        ScriptedRun sr;
        try {
          sr = ScriptOfRun(trace, config);
        } catch (const Error&) {
          continue;  // simrd would stop with an assertion
        }
        DecisionRecorder recorder;
        config.observer = &recorder;
        Replay(trace, config);
        REQUIRE(recorder.decisions.size() == sr.script.entries.size());
        const bool eager = EagerEvictions(runtime);
        for (size_t d = 0; d < recorder.decisions.size(); ++d) {
          const DecisionPoint& where = recorder.decisions[d];
          INFO("decision ", d);
          StepwiseRuntime rt = StateAtEvent(trace, eager, sr.script, d, where.event);
          CHECK(rt.event() == where.event);
          CHECK(rt.program_step() == where.program_step);
          CHECK(rt.tensor() == where.tensor);
          CHECK(static_cast<int32_t>(rt.frames().size()) - 1 == where.remat_depth);
          CHECK(rt.request() == where.request);
          CHECK(rt.memory() == where.memory_usage);
          CHECK(EvictableCount(rt) == where.pool_size);
          CHECK(rt.Evictable(where.chosen));
          ++decisions;
        }
        if (sr.run.oom) {
          const OomContext& oom = *sr.run.oom;
          StepwiseRuntime rt =
              StateAtEvent(trace, eager, sr.script, sr.script.entries.size(), oom.event);
          std::vector<TensorId> frames;
          for (const StepwiseRuntime::Frame& f : rt.frames()) frames.push_back(f.tensor);
          CHECK(frames == oom.frames);
          CHECK(rt.memory() == oom.memory_usage);
          CHECK(rt.request() == oom.request);
          CHECK(rt.program_step() == oom.program_step);
          CHECK(EvictableCount(rt) == 0);
          int64_t pinned = 0, locked = 0;
          for (StorageId s = 0; s < static_cast<StorageId>(trace.storages.size()); ++s) {
            if (!rt.material(s)) continue;
            if (rt.pinned(s))
              pinned += trace.storages[s].size;
            else if (rt.locks(s) > 0)
              locked += trace.storages[s].size;
          }
          CHECK(pinned == oom.pinned_memory);
          CHECK(locked == oom.locked_memory);
          ++ooms;
        }
      }
    }
  }
  MESSAGE(decisions, " decisions and ", ooms, " OOMs rebuilt");
  CHECK(decisions > 1000);
  CHECK(ooms > 20);
}

TEST_CASE("stepwise runtime: StateBeforeStep stops before the step's first computation") {
  Trace trace = RandomTinyTrace(3, 8);
  int32_t step = -1;  // the second compute step
  for (int32_t s = 0, computes = 0; s < static_cast<int32_t>(trace.program.size()); ++s)
    if (trace.program[s].kind == StepKind::kCompute && ++computes == 2) step = s;
  REQUIRE(step >= 0);
  EvictionScript none;
  StepwiseRuntime rt = StateBeforeStep(trace, true, none, step);
  CHECK(rt.program_step() == step);
  CHECK(rt.tensor() == trace.ops[trace.program[step].target].first_output);
  // Past the end: the final state.
  StepwiseRuntime end =
      StateBeforeStep(trace, true, none, static_cast<int32_t>(trace.program.size()));
  CHECK_FALSE(end.Advance());
}

}  // namespace
}  // namespace dtr::testing
