// RunMany (checker/drivers/sweep.h) takes the result of a run already made for a
// point whose budget lies in that run's [budget_lo, budget_hi] instead of
// replaying it. Every run it returns is compared, field by field, with an
// independent replay at the point's own budget (RunOne), on random traces at
// every few bytes of budget and on ResNet-32 around its feasibility holes,
// and the comparison sees points that were taken, not replayed. The trails
// RunMany keeps when asked are checked against each run's decisions.
#include "checker/drivers/sweep.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "checker/engine/heuristic.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

// Each decision's event and choice, replayed alone.
std::vector<std::pair<int64_t, StorageId>> Decisions(const Trace& trace, const Baseline& baseline,
                                                     const RunSpec& spec) {
  struct Recorder : ReplayObserver {
    std::vector<std::pair<int64_t, StorageId>> seen;
    Flow OnDecision(const DecisionPoint& d) override {
      seen.emplace_back(d.event, d.chosen);
      return Flow::kContinue;
    }
  } recorder;
  ReplayConfig config = ConfigFor(spec, baseline);
  config.observer = &recorder;
  Replay(trace, config);
  return recorder.seen;
}

// Sees RunMany's replays: each point begun with its own spec, once, and
// ended; the watchers it hands out see computations.
struct CountingWatch : RunWatch {
  const std::vector<RunSpec>* specs = nullptr;
  std::mutex mu;
  std::vector<int> begun, ended;  // per point
  int wrong_spec = 0;
  std::atomic<int64_t> computations{0};
  struct Counter : ReplayObserver {
    std::atomic<int64_t>* n;
    Flow OnComputation(const Computation&) override {
      ++*n;
      return Flow::kContinue;
    }
  } counter;
  explicit CountingWatch(const std::vector<RunSpec>& s)
      : specs(&s), begun(s.size(), 0), ended(s.size(), 0) {
    counter.n = &computations;
  }
  ReplayObserver* Begin(size_t point, const RunSpec& spec) override {
    std::lock_guard<std::mutex> lock(mu);
    const RunSpec& want = (*specs)[point];
    wrong_spec += spec.heuristic != want.heuristic || spec.runtime != want.runtime ||
                  spec.budget != want.budget;
    ++begun[point];
    return &counter;  // counts with atomics: shared by the workers
  }
  void End(size_t point) override {
    std::lock_guard<std::mutex> lock(mu);
    ++ended[point];
  }
};

// Compares every run of RunMany(specs) with RunOne of its spec, and with
// trails kept, each trail with the run's decisions; returns how
// many points RunMany took from another run. Specs whose replay stops at one
// of simrd's assertions (random traces find some) are left out.
int64_t CheckAgainstReplays(const Trace& trace, const Baseline& baseline,
                            std::vector<RunSpec> specs, int jobs) {
  std::vector<RunRecord> alone;
  std::erase_if(specs, [&](const RunSpec& s) {
    try {
      alone.push_back(RunOne(trace, baseline, s));
      return false;
    } catch (const Error&) {
      return true;
    }
  });
  const int64_t reused_before = RunsReused();
  std::vector<RunRecord> runs = RunMany(trace, baseline, specs, jobs);
  const int64_t reused = RunsReused() - reused_before;
  // Again keeping the trails of runs of at most kTrail decisions.
  // and watching them: the points replayed, not those taken from another run.
  constexpr int64_t kTrail = 3;
  CountingWatch watch(specs);
  const int64_t reused_before_trailed = RunsReused();
  std::vector<RunRecord> trailed =
      RunMany(trace, baseline, specs, jobs, nullptr, nullptr, kTrail, &watch);
  // (Which points are taken depends on which runs end first, with -j > 1.)
  const int64_t taken = RunsReused() - reused_before_trailed;
  CHECK(watch.wrong_spec == 0);
  CHECK(watch.begun == watch.ended);
  CHECK(std::count(watch.begun.begin(), watch.begun.end(), 1) ==
        static_cast<std::ptrdiff_t>(specs.size()) - taken);
  CHECK(std::count(watch.begun.begin(), watch.begun.end(), 0) == taken);
  if (!specs.empty()) CHECK(watch.computations > 0);
  REQUIRE(runs.size() == alone.size());
  REQUIRE(trailed.size() == alone.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    INFO(trace.source, " ", specs[i].heuristic->name, " ", RuntimeName(specs[i].runtime),
         " budget ", alone[i].result.budget, " (-j ", jobs, ")");
    CHECK(runs[i].result.budget == alone[i].result.budget);
    CHECK(EncodeForFarm(runs[i].result) == EncodeForFarm(alone[i].result));
    CHECK(std::bit_cast<uint64_t>(runs[i].overhead) == std::bit_cast<uint64_t>(alone[i].overhead));
    CHECK(!runs[i].trail);
    CHECK(EncodeForFarm(trailed[i].result) == EncodeForFarm(alone[i].result));
    if (alone[i].result.heuristic_evictions > kTrail) {
      CHECK(!trailed[i].trail);
      continue;
    }
    REQUIRE(trailed[i].trail);
    const std::vector<std::pair<int64_t, StorageId>> want = Decisions(trace, baseline, specs[i]);
    std::vector<std::pair<int64_t, StorageId>> got;
    for (size_t k = 0; k < trailed[i].trail->events.size(); ++k)
      got.emplace_back(trailed[i].trail->events[k], trailed[i].trail->steps[k].chosen);
    CHECK(got == want);
  }
  return reused;
}

TEST_CASE("RunMany: points inside a run's budget interval equal their own replays") {
  int64_t reused = 0, points = 0;
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    Trace trace = RandomTrace(seed, VariedOptions(seed));
    Baseline baseline = ComputeBaseline(trace);
    const int64_t step = std::max<int64_t>(1, baseline.memory / 30);
    std::vector<RunSpec> specs;
    for (const HeuristicSpec& h : AllHeuristics())
      for (RuntimeKind runtime :
           {RuntimeKind::kV1, RuntimeKind::kV2Eager, RuntimeKind::kV2EagerOptimized})
        for (int64_t budget = 0; budget <= baseline.memory + step; budget += step) {
          RunSpec s;
          s.heuristic = &h;
          s.runtime = runtime;
          s.budget = budget;
          s.seed = seed;
          specs.push_back(s);
        }
    INFO("seed ", seed);
    reused += CheckAgainstReplays(trace, baseline, specs, static_cast<int>(seed % 3) + 1);
    points += static_cast<int64_t>(specs.size());
  }
  MESSAGE(reused, " of ", points, " points taken from another run");
  CHECK(reused > points / 4);
}

TEST_CASE("work limit: a run stops once its evaluations plus computations pass the limit") {
  int64_t stopped = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Trace trace = RandomTrace(seed, VariedOptions(seed));
    Baseline baseline = ComputeBaseline(trace);
    const int64_t step = std::max<int64_t>(1, baseline.memory / 10);
    for (const char* h : {"DTR", "AbLocal", "LRU"})
      for (int64_t budget = step; budget <= baseline.memory; budget += step) {
        RunSpec s;
        s.heuristic = &FindHeuristic(h);
        s.budget = budget;
        RunResult free;
        try {
          free = RunOne(trace, baseline, s).result;
        } catch (const Error&) {
          continue;  // one of simrd's assertions
        }
        INFO("seed ", seed, " ", h, " budget ", budget);
        const int64_t work = free.heuristic_evals + free.events;
        // Never past the limit: the same run, field for field.
        s.work_limit = work;
        CHECK(EncodeForFarm(RunOne(trace, baseline, s).result) == EncodeForFarm(free));
        if (free.outcome != Outcome::kPass || work == 0) continue;
        // A pass's last computation comes after all its evaluations: one less stops it.
        s.work_limit = work - 1;
        const RunResult cut = RunOne(trace, baseline, s).result;
        CHECK(cut.outcome == Outcome::kStopped);
        CHECK(cut.heuristic_evals + cut.events > work - 1);
        // Half the work: stopped at the first computation past it.
        s.work_limit = work / 2;
        const RunResult half = RunOne(trace, baseline, s).result;
        CHECK(half.outcome == Outcome::kStopped);
        CHECK(half.heuristic_evals + half.events > work / 2);
        CHECK(half.events <= free.events);
        stopped += 2;
      }
  }
  CHECK(stopped > 100);
}

TEST_CASE("RunMany: ResNet-32 around its holes, with an overhead limit, equals its replays") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  std::vector<RunSpec> specs;
  for (const char* h : {"DTR", "DTREqClass"})
    for (int i = 95; i <= 112; ++i) {
      RunSpec s;
      s.heuristic = &FindHeuristic(h);
      s.ratio = Ratio{i / 1000.0, ""};
      s.overhead_limit = 2.1;  // some runs thrash
      specs.push_back(s);
    }
  const int64_t reused = CheckAgainstReplays(trace, baseline, specs, 2);
  MESSAGE(reused, " of ", specs.size(), " points taken from another run");
  CHECK(reused > 0);
}

}  // namespace
}  // namespace dtr::testing
