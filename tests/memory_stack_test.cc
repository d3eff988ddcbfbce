// The stacked memory view (diagnose/memory_stack.h): on random traces at
// budgets that pass and that fail, each column's bands sum to the memory in
// use at its computation, and that computation is the one of most memory in
// its program steps, as a plain observer of every computation finds it; on
// the captured fixture, the view by module holds parameters and modules.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "checker/engine/replay.h"
#include "diagnose/memory_stack.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"
#include "tests/test_runs.h"

namespace dtr::testing {
namespace {

// Every computation of a run: (event, program step, memory in use after it).
struct EveryComputation : ReplayObserver {
  struct Seen {
    int64_t event;
    int32_t step;
    int64_t memory;
  };
  std::vector<Seen> seen;
  bool WantsScores() const override { return false; }
  Flow OnComputation(const Computation& c) override {
    seen.push_back({c.event, c.program_step, c.memory_usage});
    return Flow::kContinue;
  }
};

void CheckColumns(const StackedMemory& view, const std::vector<EveryComputation::Seen>& seen,
                  size_t max_bands) {
  REQUIRE_FALSE(view.bands.empty());
  CHECK(view.bands.size() <= max_bands);
  CHECK(view.bands.back().kind == StackBand::Kind::kOther);
  for (const StackColumn& col : view.columns) {
    REQUIRE(col.bytes.size() == view.bands.size());
    // The bands hold all the memory in use, nothing more.
    CHECK(std::accumulate(col.bytes.begin(), col.bytes.end(), int64_t{0}) == col.memory);
    for (int64_t b : col.bytes) CHECK(b >= 0);
    // The sampled computation is the first of most memory in the column's steps.
    int64_t best = -1, best_event = -1;
    for (const auto& s : seen)
      if (s.step >= col.first_step && s.step <= col.last_step && s.memory > best) {
        best = s.memory;
        best_event = s.event;
      }
    CHECK(col.event == best_event);
    CHECK(col.memory == best);
  }
}

TEST_CASE("memory stack: the bands sum to the memory in use at every sampled computation") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const Trace trace = RandomTrace(seed, VariedOptions(seed));
    const Baseline baseline = ComputeBaseline(trace);
    for (double fraction : {1.0, 0.8, 0.6, 0.45}) {
      CAPTURE(fraction);
      const RunSpec spec =
          SpecAtBudget(static_cast<int64_t>(static_cast<double>(baseline.memory) * fraction));
      // Few columns and bands, so that columns span several steps and "other" is used.
      for (int columns : {3, 600}) {
        EveryComputation all;
        ReplayConfig config = ConfigFor(spec, baseline);
        config.observer = &all;
        RunResult r;
        try {
          r = Replay(trace, config);
        } catch (const Error&) {
          // simrd stops with an assertion on this run: so does the stack.
          CHECK_THROWS_AS(RecordMemoryStack(trace, baseline, spec, columns, 3), Error);
          continue;
        }
        const MemoryStack stack = RecordMemoryStack(trace, baseline, spec, columns, 3);
        CHECK(stack.outcome == r.outcome);
        CHECK(stack.budget == r.budget);
        CHECK_FALSE(stack.by_module);  // random traces carry no modules
        CheckColumns(stack.by_storage, all.seen, 3);
        // With a column per program step: one for every step some computation reached.
        if (columns >= static_cast<int>(trace.program.size())) {
          std::set<int32_t> steps;
          for (const auto& s : all.seen) steps.insert(s.step);
          CHECK(stack.by_storage.columns.size() == steps.size());
        }
        // The bands' peaks are reached in some column.
        for (size_t b = 0; b < stack.by_storage.bands.size(); ++b) {
          int64_t peak = 0;
          for (const StackColumn& col : stack.by_storage.columns) peak = std::max(peak, col.bytes[b]);
          CHECK(peak == stack.by_storage.bands[b].peak_bytes);
        }
      }
    }
  }
}

TEST_CASE("memory stack: a captured trace is stacked by module, parameters apart") {
  const Trace trace = LoadTrace(std::string(DTRCHECK_SOURCE_DIR) + "/tests/e2e/data/attributed.log");
  const Baseline baseline = ComputeBaseline(trace);
  const RunSpec spec = SpecAtBudget(baseline.memory);
  const MemoryStack stack = RecordMemoryStack(trace, baseline, spec);
  REQUIRE(stack.by_module);
  EveryComputation all;
  ReplayConfig config = ConfigFor(spec, baseline);
  config.observer = &all;
  Replay(trace, config);
  CheckColumns(*stack.by_module, all.seen, 8);
  CheckColumns(stack.by_storage, all.seen, 8);
  bool parameters = false, modules = false;
  for (const StackBand& b : stack.by_module->bands) {
    parameters |= b.kind == StackBand::Kind::kRole && b.role == RoleKind::kParameter;
    modules |= b.kind == StackBand::Kind::kModule;
    // The fixture's model is one Sequential "0": its modules are told apart a level down.
    if (b.kind == StackBand::Kind::kModule) CHECK(b.module.rfind("0", 0) == 0);
  }
  CHECK(parameters);
  CHECK(modules);
}

TEST_CASE("memory stack: modules are grouped at the deepest level with few enough of them") {
  CHECK(ModulePrefix("layer1.0.conv1", 1) == "layer1");
  CHECK(ModulePrefix("layer1.0.conv1", 2) == "layer1.0");
  CHECK(ModulePrefix("layer1.0.conv1", 5) == "layer1.0.conv1");
  CHECK(ModulePrefix("fc", 1) == "fc");
  CHECK(ModulePrefix("", 1) == "");
  // torchvision's ResNet-18: ten modules at the top already.
  const std::vector<std::string> r18 = {"",         "conv1",    "bn1",        "relu",
                                        "maxpool",  "layer1",   "layer1.0",   "layer1.0.conv1",
                                        "layer1.1", "layer2",   "layer2.0",   "layer2.1",
                                        "layer3",   "layer4",   "avgpool",    "fc"};
  CHECK(ModuleGroupDepth(r18, 7) == 1);
  // examples/resnet.py: stem, layers and head at the top, seven a level down.
  const std::vector<std::string> small = {"",         "head",     "layers.0",      "layers.0.bn1",
                                          "layers.1", "layers.2", "layers.2.relu", "stem.0",
                                          "stem.1",   "stem.2"};
  CHECK(ModuleGroupDepth(small, 7) == 2);
  CHECK(ModuleGroupDepth(small, 6) == 1);
  // One Sequential around everything: told apart a level down.
  CHECK(ModuleGroupDepth({"", "0", "0.conv", "0.bn"}, 7) == 2);
  CHECK(ModuleGroupDepth({"0"}, 7) == 1);
  CHECK(ModuleGroupDepth({}, 7) == 1);
}

}  // namespace
}  // namespace dtr::testing
