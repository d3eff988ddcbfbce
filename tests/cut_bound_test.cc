// The keep-or-recompute cut against exhaustive search on random tiny traces
// (multi-output operators, aliases, copies and mutations; seeds printed on
// failure): the bound never passes the smallest budget some script fits,
// for the eager and the non-eager runtime.
#include "checker/cut_bound.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <random>
#include <sstream>

#include "checker/exhaustive_search.h"
#include "checker/memory_bound.h"
#include "model/trace_parser.h"
#include "checker/heuristic.h"
#include "checker/replay.h"
#include "tests/random_trace.h"
#include "tests/test_paths.h"
#include "traces/generators.h"

namespace dtr::testing {
namespace {

// For each seed and runtime: optimum >= cut bound >= static bound, and the
// refutation at a budget agrees with the bound.
void CrossCheck(uint64_t first, uint64_t seeds, int base_storages) {
  int stronger = 0, exact = 0, compared = 0;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    Trace trace = RandomTinyTrace(seed, base_storages + static_cast<int>(seed % 5));
    MemoryBound stat = ComputeMemoryBound(trace);
    for (bool eager : {true, false}) {
      INFO("seed ", seed, eager ? " eager" : " not eager");
      int64_t best = SmallestFeasibleBudget(trace, eager);
      if (best < 0) continue;  // the search gave up
      ++compared;
      CutOptions o;
      o.eager = eager;
      CutBound cut = ComputeCutBound(trace, stat, best, o);
      CHECK(cut.bytes >= stat.bytes);
      CHECK(cut.bytes <= best);
      CutArgument arg;
      CHECK_FALSE(RefuteByCut(trace, stat, best, o, &arg));
      if (cut.bytes > stat.bytes) {
        CHECK(RefuteByCut(trace, stat, cut.bytes - 1, o, &arg));
        CHECK(arg.need + arg.carried + arg.cut > arg.budget);
      }
      stronger += cut.bytes > stat.bytes;
      exact += cut.bytes == best;
    }
  }
  MESSAGE(compared, " (trace, runtime) pairs: the cut beats the static bound on ", stronger,
          " and meets the optimum on ", exact);
}

TEST_CASE("cut bound: never above the exhaustive optimum on tiny traces") { CrossCheck(1, 60, 6); }

// A small generated network (residual, recurrent or chain: forward, then a
// backward pass with multi-output gradients and releases after last uses, the
// shapes where the cut bites), with random sizes and argument orders.
std::string ShapedTrace(uint64_t seed, int scale = 0) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::string text;
  switch (seed % 3) {
    case 0: {
      ResNetOptions o;
      o.blocks = pick(1, 2 + scale);
      o.stages = std::min(o.blocks, pick(1, 1 + scale));
      o.param_size = pick(0, 1);
      text = GenerateResNet(o);
      break;
    }
    case 1: {
      RnnOptions o;
      o.steps = pick(2, 3 + scale);
      text = GenerateRnn(o);
      break;
    }
    default: {
      ChainOptions o;
      o.layers = pick(3, 6 + 2 * scale);
      text = GenerateChain(o);
    }
  }
  // Random sizes (aliases stay 0); arguments of some calls shuffled, their
  // ALIAS indices following.
  std::istringstream in(text);
  std::string line, out;
  std::vector<int> moved;  // of the last CALL: new position of each old argument
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    const std::string kind = j.value("INSTRUCTION", "");
    if (kind == "MEMORY" && j["MEMORY"].get<std::string>() != "0") {
      j["MEMORY"] = std::to_string(pick(1, 6) * 4);
    } else if (kind == "CALL") {
      std::vector<std::string> args = j["ARGS"];
      moved.assign(args.size(), 0);
      std::vector<int> order(args.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
      if (pick(0, 2) == 0) std::shuffle(order.begin(), order.end(), rng);
      std::vector<std::string> shuffled;
      for (size_t i = 0; i < order.size(); ++i) {
        shuffled.push_back(args[order[i]]);
        moved[order[i]] = static_cast<int>(i);
      }
      j["ARGS"] = shuffled;
    } else if (kind == "ALIAS") {
      int a = std::stoi(j["ALIAS"].get<std::string>());
      if (a >= 0) j["ALIAS"] = std::to_string(moved.at(a));
    }
    out += j.dump() + "\n";
  }
  return out;
}

void CrossCheckShaped(uint64_t first, uint64_t seeds, int scale = 0) {
  int stronger = 0, exact = 0, compared = 0, carried = 0;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    Trace trace = ParseTraceString(ShapedTrace(seed, scale), "shaped.log");
    MemoryBound stat = ComputeMemoryBound(trace);
    for (bool eager : {true, false}) {
      INFO("seed ", seed, eager ? " eager" : " not eager");
      int64_t best = SmallestFeasibleBudget(trace, eager, 500'000);
      if (best < 0) continue;  // the search gave up
      ++compared;
      CutOptions o;
      o.eager = eager;
      CutBound cut = ComputeCutBound(trace, stat, best, o);
      CHECK(cut.bytes <= best);
      stronger += cut.bytes > stat.bytes;
      exact += cut.bytes == best;
      carried += cut.raised && !cut.attained_by.kept.empty();
    }
  }
  MESSAGE(compared, " shaped (trace, runtime) pairs: the cut beats the static bound on ", stronger,
          " (with storages kept across frames on ", carried, ") and meets the optimum on ", exact);
}

TEST_CASE("cut bound: never above the exhaustive optimum on small generated networks") {
  CrossCheckShaped(1, 24);
}

TEST_CASE("cut bound: long cross-check (run with --no-skip)" * doctest::skip()) {
  CrossCheck(1000, 2000, 6);
  CrossCheck(5000, 400, 10);
  CrossCheckShaped(100, 600);
  CrossCheckShaped(2000, 300, 1);
}

TEST_CASE("cut bound: ResNet-32 never refutes the peak of a passing run, and beats the static bound") {
  // Every passing DTR run's peak is a budget some script fits (the run's own
  // evictions), so the argument must not refute it. The bound itself is
  // measured against the best verified schedules in bench/lower_bounds.sh.
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  MemoryBound stat = ComputeMemoryBound(trace);
  CutOptions o;  // eager, as the default runtime
  int64_t lowest_peak = baseline.memory;
  for (double ratio : {0.098, 0.1, 0.107, 0.12, 0.15, 0.3}) {
    INFO("ratio ", ratio);
    ReplayConfig config;
    config.heuristic = &FindHeuristic("DTR");
    config.budget = BudgetForRatio(baseline.memory, ratio);
    RunResult run = Replay(trace, config);
    REQUIRE(run.outcome == Outcome::kPass);
    CHECK_FALSE(RefuteByCut(trace, stat, run.max_memory, o, nullptr));
    lowest_peak = std::min(lowest_peak, run.max_memory);
  }
  o.resolution = baseline.memory / 100000;
  CutBound cut = ComputeCutBound(trace, stat, lowest_peak, o);
  CHECK(cut.bytes <= lowest_peak);
  CHECK(cut.raised);
  // The static bound sees one operator: 0.057 of the baseline; the cut sees
  // the gradient kept across a residual block and the block input a
  // recomputation would have to hold.
  CHECK(cut.bytes > BudgetForRatio(baseline.memory, 0.09));
  CutArgument why;
  CHECK(RefuteByCut(trace, stat, cut.bytes - 1 - o.resolution, o, &why));
  CHECK(why.need + why.carried + why.cut > why.budget);
}

}  // namespace
}  // namespace dtr::testing
