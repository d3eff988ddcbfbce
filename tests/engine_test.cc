// The replay engine's step API (checker/engine/engine.h) on random traces: driving
// it by hand replays as the same script through Replay(); a run stopped
// before a decision stands where the decision is, and its copy driven on
// ends exactly as the uninterrupted run; the state at an OOM is the OOM
// context. Seeds are printed on failure.
#include "checker/engine/engine.h"

#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "checker/engine/heuristic.h"
#include "checker/engine/heuristic_policy.h"
#include "checker/engine/replay.h"
#include "checker/proofs/schedule_checker.h"
#include "model/error.h"
#include "tests/random_trace.h"

namespace dtr::testing {
namespace {

// What the engine reports of a computation, and what the engine shows at
// its computation point.
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
  Flow OnComputation(const Computation& c) override {
    seen.push_back({c.event, c.tensor, c.remat, c.memory_usage, c.program_step, c.remat_depth});
    return Flow::kContinue;
  }
};

struct DecisionRecorder : ReplayObserver {
  std::vector<DecisionPoint> decisions;
  Flow OnDecision(const DecisionPoint& d) override {
    decisions.push_back(d);
    return Flow::kContinue;
  }
};

ComputationView ViewOf(const Engine& e) {
  return {e.event(),
          e.tensor(),
          e.frames().back().remat,
          e.memory() + e.request(),
          e.program_step(),
          static_cast<int32_t>(e.frames().size()) - 1};
}

int32_t EvictableCount(const Engine& e) {
  int32_t n = 0;
  for (StorageId s = 0; s < static_cast<StorageId>(e.trace().storages.size()); ++s) n += e.Evictable(s);
  return n;
}

// Evictable by the definition (material, unpinned, unlocked), not the pool.
bool EvictableByState(const Engine& e, StorageId s) { return e.material(s) && !e.pinned(s) && e.locks(s) == 0; }

// A random trace with its baseline; none when RuntimeV1 stops with a simrd
// assertion on it.
std::optional<std::pair<Trace, Baseline>> RandomTraceWithBaseline(uint64_t seed) {
  Trace trace = RandomTrace(seed, VariedOptions(seed));
  try {
    Baseline baseline = ComputeBaseline(trace);
    return std::make_pair(std::move(trace), baseline);
  } catch (const SimrdAssertionError&) {
    return std::nullopt;
  }
}

// Two results of the same run: every counter equal.
void CheckSameResult(const RunResult& a, const RunResult& b) {
  CHECK(a.outcome == b.outcome);
  CHECK(a.clock == b.clock);
  CHECK(a.remat_compute == b.remat_compute);
  CHECK(a.model_compute == b.model_compute);
  CHECK(a.heuristic_evals == b.heuristic_evals);
  CHECK(a.max_memory == b.max_memory);
  CHECK(a.heuristic_evictions == b.heuristic_evictions);
  CHECK(a.eager_evictions == b.eager_evictions);
  CHECK(a.evict_count == b.evict_count);
  CHECK(a.events == b.events);
  CHECK(a.budget_lo == b.budget_lo);
  CHECK(a.budget_hi == b.budget_hi);
  CHECK(a.oom.has_value() == b.oom.has_value());
  if (a.oom && b.oom) CHECK(a.oom->frames == b.oom->frames);
}

TEST_CASE("engine: stepping by hand with random evictions replays as the same script") {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    INFO("seed ", seed);
    Trace trace = RandomTrace(seed, VariedOptions(seed));
    for (RuntimeKind runtime : {RuntimeKind::kV2EagerOptimized, RuntimeKind::kV2Optimized}) {
      INFO(RuntimeName(runtime));
      std::mt19937_64 rng(seed * 7 + EagerEvictions(runtime));
      EngineOptions options;
      options.runtime = runtime;
      Engine e(trace, options);
      EvictionScript script;
      std::vector<ComputationView> expected;
      while (e.Advance()) {
        for (StorageId s = 0; s < static_cast<StorageId>(trace.storages.size()); ++s) {
          REQUIRE(e.Evictable(s) == EvictableByState(e, s));
          if (e.Evictable(s) && rng() % 3 == 0) {
            e.Evict(s);
            script.entries.push_back({e.event(), s});
          }
        }
        expected.push_back(ViewOf(e));
        e.Compute();
      }
      CHECK(e.done());
      const int64_t peak = e.peak_memory();
      ComputationRecorder recorder;
      ScheduleCheck at_peak = CheckSchedule(trace, peak, script, runtime, &recorder);
      CHECK(at_peak.passed());
      CHECK(at_peak.run.max_memory == peak);
      CHECK(at_peak.run.events == e.event());
      CHECK(recorder.seen == expected);
      if (peak > 0) CHECK(CheckSchedule(trace, peak - 1, script, runtime).outcome == Outcome::kOom);
    }
  }
}

// StepLookahead against what it stands for: a copy of the engine run on
// without evictions until the step's frames are done. At every computation
// point of runs with random evictions (deep recursions), the same
// computations at the same events.
TEST_CASE("engine: the step lookahead computes what a copy run on would") {
  int64_t deep = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed ", seed);
    Trace trace = RandomTrace(seed, VariedOptions(seed));
    for (RuntimeKind runtime : {RuntimeKind::kV2EagerOptimized, RuntimeKind::kV2}) {
      INFO(RuntimeName(runtime));
      std::mt19937_64 rng(seed * 11 + EagerEvictions(runtime));
      EngineOptions options;
      options.runtime = runtime;
      Engine e(trace, options);
      StepLookahead lookahead;
      while (e.Advance()) {
        for (StorageId s = 0; s < static_cast<StorageId>(trace.storages.size()); ++s)
          if (e.Evictable(s) && rng() % 2 == 0) e.Evict(s);
        std::vector<std::pair<TensorId, int64_t>> expected, seen;
        Engine rest = e;
        for (;;) {
          expected.emplace_back(rest.tensor(), rest.event());
          rest.Compute();
          if (rest.frames().empty() || !rest.Advance()) break;
        }
        lookahead.ForEach(e, [&](TensorId t, int64_t event) { seen.emplace_back(t, event); });
        REQUIRE(seen == expected);
        deep += seen.size() > 2;
        e.Compute();
      }
      CHECK(e.done());
    }
  }
  MESSAGE("lookaheads of more than two computations: ", deep);
  CHECK(deep > 100);
}

TEST_CASE("engine: a run stopped before a decision stands there, and its copy ends as the whole run") {
  const char* heuristics[] = {"DTR", "DTREqClass", "LRU", "LargestStorage", "MSPS", "DTRUnopt"};
  int64_t decisions = 0, ooms = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    INFO("seed ", seed);
    auto traced = RandomTraceWithBaseline(seed);
    if (!traced) continue;
    const auto& [trace, baseline] = *traced;
    const char* name = heuristics[seed % std::size(heuristics)];
    for (RuntimeKind runtime : {RuntimeKind::kV2EagerOptimized, RuntimeKind::kV2Optimized}) {
      for (double ratio : {0.5, 0.7, 0.9}) {
        INFO(name, " ", RuntimeName(runtime), " ratio ", ratio);
        ReplayConfig config;
        config.runtime = runtime;
        config.heuristic = &FindHeuristic(name);
        config.budget = BudgetForRatio(baseline.memory, ratio);
        DecisionRecorder recorder;
        config.observer = &recorder;
        RunResult whole;
        try {
          whole = Replay(trace, config);
        } catch (const SimrdAssertionError&) {
          continue;
        }
        config.observer = nullptr;
        const size_t n = recorder.decisions.size();
        for (size_t d = 0; d < n; d += 1 + n / 7) {
          const DecisionPoint& where = recorder.decisions[d];
          INFO("decision ", d);
          ReplayState st = ReplayWithState(trace, config, static_cast<int64_t>(d));
          REQUIRE(st.result.outcome == Outcome::kStopped);
          const Engine& e = st.engine;
          CHECK(e.at_point());
          CHECK(e.decisions() == static_cast<int64_t>(d));
          CHECK(e.event() == where.event);
          CHECK(e.clock() == where.clock);
          CHECK(e.program_step() == where.program_step);
          CHECK(e.tensor() == where.tensor);
          CHECK(static_cast<int32_t>(e.frames().size()) - 1 == where.remat_depth);
          CHECK(e.request() == where.request);
          CHECK(e.memory() == where.memory_usage);
          CHECK(EvictableCount(e) == where.pool_size);
          CHECK(e.Evictable(where.chosen));
          // A copy driven on by a fresh policy ends as the uninterrupted run.
          Engine copy = st.engine;
          HeuristicPolicy policy(*config.heuristic, config.seed);
          CheckSameResult(Drive(copy, policy, nullptr), whole);
          ++decisions;
        }
        if (whole.oom) {
          const OomContext& oom = *whole.oom;
          ReplayState st = ReplayWithState(trace, config);
          const Engine& e = st.engine;
          std::vector<TensorId> frames;
          for (const Engine::Frame& f : e.frames()) frames.push_back(f.tensor);
          CHECK(frames == oom.frames);
          CHECK(e.memory() == oom.memory_usage);
          CHECK(e.request() == oom.request);
          CHECK(e.program_step() == oom.program_step);
          CHECK(EvictableCount(e) == 0);
          int64_t pinned = 0, locked = 0;
          for (StorageId s = 0; s < static_cast<StorageId>(trace.storages.size()); ++s) {
            if (!e.material(s)) continue;
            if (e.pinned(s))
              pinned += trace.storages[s].size;
            else if (e.locks(s) > 0)
              locked += trace.storages[s].size;
          }
          CHECK(pinned == oom.pinned_memory);
          CHECK(locked == oom.locked_memory);
          CHECK(e.memory() + e.request() > config.budget);
          ++ooms;
        }
      }
    }
  }
  MESSAGE(decisions, " decisions and ", ooms, " OOMs checked");
  CHECK(decisions > 300);
  CHECK(ooms > 20);
}

TEST_CASE("engine: an observer's stop leaves the engine resumable") {
  // Stop at every computation: the stepped run ends as the uninterrupted one.
  struct StopEveryComputation : ReplayObserver {
    int64_t stops = 0;
    Flow OnComputation(const Computation&) override {
      ++stops;
      return Flow::kStop;
    }
  };
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("seed ", seed);
    auto traced = RandomTraceWithBaseline(seed);
    if (!traced) continue;
    const auto& [trace, baseline] = *traced;
    ReplayConfig config;
    config.heuristic = &FindHeuristic("DTR");
    config.budget = BudgetForRatio(baseline.memory, 0.6);
    RunResult whole;
    try {
      whole = Replay(trace, config);
    } catch (const SimrdAssertionError&) {
      continue;
    }
    StopEveryComputation stopper;
    config.observer = &stopper;
    Engine engine(trace, EngineOptionsFor(config));
    HeuristicPolicy policy(*config.heuristic, 0);
    RunResult r = Drive(engine, policy, &stopper);
    int64_t rounds = 1;
    while (r.outcome == Outcome::kStopped) {
      engine.clear_stop();
      r = Drive(engine, policy, &stopper);
      ++rounds;
    }
    CHECK(rounds == stopper.stops + 1);
    CheckSameResult(r, whole);
  }
}

TEST_CASE("engine: ScriptedStateBeforeStep stops before the step's first computation") {
  Trace trace = RandomTinyTrace(3, 8);
  int32_t step = -1;  // the second compute step
  for (int32_t s = 0, computes = 0; s < static_cast<int32_t>(trace.program.size()); ++s)
    if (trace.program[s].kind == StepKind::kCompute && ++computes == 2) step = s;
  REQUIRE(step >= 0);
  EvictionScript none;
  Engine e = ScriptedStateBeforeStep(trace, RuntimeKind::kV2EagerOptimized, none, step);
  CHECK(e.program_step() == step);
  CHECK(e.tensor() == trace.ops[trace.program[step].target].first_output);
  // Past the end: the final state.
  Engine end = ScriptedStateBeforeStep(trace, RuntimeKind::kV2EagerOptimized, none,
                                       static_cast<int32_t>(trace.program.size()));
  CHECK_FALSE(end.Advance());
  CHECK(end.done());
}

}  // namespace
}  // namespace dtr::testing
