// The synthetic trace generators: every output parses, has the operator count
// its structure implies, is deterministic, replays at ratio 1.0 without any
// rematerialization, and behaves as expected under small budgets.
#include <doctest/doctest.h>

#include <cmath>

#include "checker/engine/heuristic.h"
#include "checker/engine/replay.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/test_paths.h"
#include "traces/demo.h"
#include "traces/generators.h"
#include "traces/manifest.h"

namespace dtr::testing {
namespace {

RunResult RunAtBudget(const Trace& trace, int64_t budget) {
  ReplayConfig c;
  c.heuristic = &FindHeuristic("DTR");
  c.budget = budget;
  return Replay(trace, c);
}

// At ratio 1.0 (the baseline peak) nothing may be rematerialized: the clock
// is the baseline compute plus its start value 1, and the heuristic never runs.
void CheckFullBudgetRun(const Trace& trace) {
  Baseline b = ComputeBaseline(trace);
  RunResult r = RunAtBudget(trace, BudgetForRatio(b.memory, 1.0));
  CHECK(r.outcome == Outcome::kPass);
  CHECK(r.heuristic_evictions == 0);
  CHECK(r.remat_compute == 0);
  CHECK(r.clock == b.compute + 1);
  CHECK(Overhead(r.clock, b.compute) == Overhead(b.compute + 1, b.compute));
  CHECK(r.max_memory <= r.budget);
}

int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

TEST_CASE("gen chain: 2N + 2 operators, a backward pass, nothing left but the input gradient") {
  for (int layers : {1, 2, 16, 100}) {
    ChainOptions o;
    o.layers = layers;
    std::string text = GenerateChain(o);
    CHECK(text.rfind("{\"ANNOTATION\":\"START\",\"INSTRUCTION\":\"ANNOTATE\"}\n", 0) == 0);
    CHECK(CountLines(text, "\"ANNOTATION\":\"BACKWARD\"") == 1);
    Trace t = ParseTraceString(text, "chain");
    CHECK(t.ops.size() == static_cast<size_t>(2 * layers + 2));
    CHECK(CountLines(text, "\"NAME\":\"layer_backward\"") == layers);
    // The names still referenced at the end are the input and its gradient,
    // the last operator's output.
    std::vector<TensorId> end_pins;
    for (size_t i = t.program.size(); i-- > 0 && t.program[i].kind == StepKind::kPin;)
      end_pins.insert(end_pins.begin(), t.program[i].target);
    CHECK(end_pins == std::vector<TensorId>{0, static_cast<TensorId>(t.tensors.size() - 1)});
    CheckFullBudgetRun(t);
  }
}

TEST_CASE(
    "gen chain: at the minimum budget it passes with heavy rematerialization, one byte less is "
    "OOM") {
  // A backward layer needs the pinned input, its gradient, its saved input and
  // its output: four blocks is the least any schedule can use.
  ChainOptions o;
  o.layers = 64;
  o.size = 1000;
  Trace t = ParseTraceString(GenerateChain(o), "chain");
  Baseline b = ComputeBaseline(t);
  RunResult at_min = RunAtBudget(t, 4 * o.size);
  CHECK(at_min.outcome == Outcome::kPass);
  CHECK(at_min.remat_compute > b.compute);  // more recomputation than computation
  CHECK(RunAtBudget(t, 4 * o.size - 1).outcome == Outcome::kOom);
  // With about sqrt(N) blocks DTR needs only a small constant factor (the DTR
  // paper's result for this network).
  int64_t sqrt_blocks = static_cast<int64_t>(std::ceil(std::sqrt(o.layers)));
  RunResult at_sqrt = RunAtBudget(t, sqrt_blocks * o.size);
  CHECK(at_sqrt.outcome == Outcome::kPass);
  CHECK(at_sqrt.remat_compute > 0);
  CHECK(Overhead(at_sqrt.clock, b.compute) < 3.0);
  CHECK(at_sqrt.clock < at_min.clock);
  CHECK(at_sqrt.max_memory <= at_sqrt.budget);
}

TEST_CASE("gen resnet: operator count of blocks, stages and weights") {
  struct Case {
    int blocks, stages;
    int64_t params;
  };
  for (Case c : {Case{1, 1, 0}, Case{4, 1, 0}, Case{8, 2, 0}, Case{8, 3, 4096}, Case{5, 2, 100}}) {
    ResNetOptions o;
    o.blocks = c.blocks;
    o.stages = c.stages;
    o.param_size = c.params;
    o.inner_size = 3 << 19;
    std::string text = GenerateResNet(o);
    Trace t = ParseTraceString(text, "resnet");
    // input, stem, 4 per block forward and backward, a pooling and its
    // backward per extra stage, loss, seed, loss backward; with weights, one
    // constant per convolution and the stem's backward.
    size_t expected =
        2 + 8 * c.blocks + 2 * (c.stages - 1) + 3 + (c.params > 0 ? 2 * c.blocks + 2 : 0);
    CAPTURE(c.blocks);
    CAPTURE(c.stages);
    CHECK(t.ops.size() == expected);
    CHECK(CountLines(text, "\"NAME\":\"max_pool\"") == c.stages - 1);
    CheckFullBudgetRun(t);
  }
}

TEST_CASE("gen resnet: sizes halve at each stage") {
  ResNetOptions o;
  o.blocks = 3;
  o.stages = 3;
  o.size = 1 << 20;
  o.inner_size = 1 << 19;
  Trace t = ParseTraceString(GenerateResNet(o), "resnet");
  std::vector<int64_t> add_sizes;
  for (const Operator& op : t.ops)
    if (op.name.rfind("add/", 0) == 0 && add_sizes.size() < 3) add_sizes.push_back(op.total_size);
  CHECK(add_sizes == std::vector<int64_t>{1 << 20, 1 << 19, 1 << 18});
}

TEST_CASE("gen rnn: 6N + 5 operators, an aliasing view, two-output backward") {
  for (int steps : {1, 3, 32}) {
    RnnOptions o;
    o.steps = steps;
    Trace t = ParseTraceString(GenerateRnn(o), "rnn");
    CHECK(t.ops.size() == static_cast<size_t>(6 * steps + 5));
    int aliases = 0, two_output = 0;
    for (const Tensor& x : t.tensors) aliases += x.is_alias;
    for (const Operator& op : t.ops) two_output += op.num_outputs == 2;
    CHECK(aliases == 1);
    CHECK(two_output == steps);
    CheckFullBudgetRun(t);
  }
}

TEST_CASE("gen rnn: below the baseline DTR rematerializes and still passes") {
  RnnOptions o;
  o.steps = 16;
  Trace t = ParseTraceString(GenerateRnn(o), "rnn");
  Baseline b = ComputeBaseline(t);
  RunResult r = RunAtBudget(t, BudgetForRatio(b.memory, 0.5));
  CHECK(r.outcome == Outcome::kPass);
  CHECK(r.remat_compute > 0);
  CHECK(r.max_memory <= r.budget);
}

TEST_CASE("generators are deterministic") {
  CHECK(GenerateChain({}) == GenerateChain({}));
  CHECK(GenerateResNet({}) == GenerateResNet({}));
  CHECK(GenerateRnn({}) == GenerateRnn({}));
  CHECK(GenerateDemo() == GenerateDemo());
  CHECK(GenerateDemo() == GenerateResNet(DemoOptions()));
}

TEST_CASE("generators reject bad options with the option's name") {
  ChainOptions c;
  c.layers = 0;
  CHECK_THROWS_WITH_AS(GenerateChain(c), "gen chain: --layers must be at least 1", Error);
  ResNetOptions r;
  r.stages = 3;
  r.blocks = 2;
  CHECK_THROWS_WITH_AS(GenerateResNet(r), "gen resnet: --stages must be between 1 and --blocks",
                       Error);
  RnnOptions n;
  n.hidden_size = 0;
  CHECK_THROWS_WITH_AS(GenerateRnn(n), "gen rnn: --hidden-size must be at least 1 byte", Error);
}

TEST_CASE("manifest: generators and public trace names") {
  bool chain = false;
  for (const GeneratorEntry& g : TraceGenerators()) chain |= g.name == "chain";
  CHECK(chain);
  CHECK(PublicTraces().size() == 8);
  std::string path = FindPublicTrace(TracesDir(), "resnet32");
  CHECK(path.find("resnet32-") != std::string::npos);
  CHECK_THROWS_WITH_AS(FindPublicTrace(TracesDir(), "resnet50"),
                       "'resnet50' is not a known public trace name", Error);
}

}  // namespace
}  // namespace dtr::testing
