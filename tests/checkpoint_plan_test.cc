// dtrcheck plan (diagnose/checkpoint_plan.h): the candidates of a captured
// trace, the simulated checkpoint of one module, and the greedy plan at
// budgets above, between and below.
//
// The fixture tests/e2e/data/attributed.log is a capture of a Sequential of
// one block "0" (a convolution "0.conv", a batch norm "0.bn", a relu), then
// pow and mean outside the model; one SGD step with momentum. Its baseline
// peaks at 1,792 bytes, at the backward's mul making x22 (232 bytes of
// constants, x7 256, x11 + x12 16, x13 256, x16 4, x17 4, x19, x20, x21,
// x22 256 each).
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "checker/proofs/memory_bound.h"
#include "diagnose/checkpoint_plan.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "test_paths.h"

namespace dtr {
namespace {

const std::string kFixture = std::string(DTRCHECK_SOURCE_DIR) + "/tests/e2e/data/attributed.log";

const CheckpointCandidate* Find(const std::vector<CheckpointCandidate>& all, const std::string& m) {
  for (const CheckpointCandidate& c : all)
    if (c.module == m) return &c;
  return nullptr;
}

int32_t IndexOf(const std::vector<CheckpointCandidate>& all, const std::string& m) {
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].module == m) return static_cast<int32_t>(i);
  return -1;
}

std::vector<std::string> Names(const Trace& t, const std::vector<StorageId>& storages) {
  std::vector<std::string> out;
  for (StorageId s : storages) out.push_back(t.tensors[t.storages[s].root].name);
  return out;
}

TEST_CASE("checkpoint plan: candidates are the modules of one forward call, with their internals") {
  const Trace t = LoadTrace(kFixture);
  const std::vector<CheckpointCandidate> all = CheckpointCandidates(t);
  REQUIRE(all.size() == 3);
  CHECK(all[0].module == "0");  // an ancestor first
  CHECK(all[1].module == "0.conv");
  CHECK(all[2].module == "0.bn");
  // "0": the convolution's x7 and the batch norm's saved mean and invstd
  // (x11, x12) are read only inside it or by the backward; its output x13 is
  // read by pow, outside. x9 has no bytes; x10 (read by relu, inside) is not
  // read by the backward: released after relu, it is freed anyway.
  CHECK(Names(t, Find(all, "0")->internal) == std::vector<std::string>{"x7", "x11", "x12"});
  CHECK(Find(all, "0")->forward_ops == 6);
  CHECK(Names(t, Find(all, "0.conv")->internal).empty());  // x7 is read by the batch norm
  CHECK(Names(t, Find(all, "0.bn")->internal) == std::vector<std::string>{"x11", "x12"});
}

// The fixture with ENTER keys added: `enters` maps a line of the fixture
// (1-based) to the JSON list written on it.
Trace WithEnterKeys(const std::vector<std::pair<int, std::string>>& enters) {
  std::ifstream in(kFixture);
  std::string text, line;
  for (int n = 1; std::getline(in, line); ++n) {
    for (const auto& [at, list] : enters)
      if (at == n) line.insert(line.find("\"INSTRUCTION\""), "\"ENTER\":" + list + ",");
    text += line + "\n";
  }
  return ParseTraceString(text, "attributed-enter.log");
}

std::vector<std::string> Modules(const std::vector<CheckpointCandidate>& all) {
  std::vector<std::string> out;
  for (const CheckpointCandidate& c : all) out.push_back(c.module);
  return out;
}

TEST_CASE("checkpoint plan: with ENTER keys, only modules called once are candidates") {
  // As captured: the model, block 0 and its convolution start at the
  // convolution (line 18), the batch norm at its first operator (line 21).
  CHECK(Modules(CheckpointCandidates(WithEnterKeys({{18, R"(["","0","0.conv"])"}, {21, R"(["0.bn"])"}}))) ==
        std::vector<std::string>{"0", "0.conv", "0.bn"});
  // Block 0 never entered, as a ModuleList whose parent calls its children:
  // its name prefixes theirs, but wrapping it would checkpoint nothing.
  CHECK(Modules(CheckpointCandidates(WithEnterKeys({{18, R"(["","0.conv"])"}, {21, R"(["0.bn"])"}}))) ==
        std::vector<std::string>{"0.conv", "0.bn"});
  // The batch norm entered twice (a module reused): both calls would be
  // checkpointed, and the plan simulates one.
  CHECK(Modules(CheckpointCandidates(
            WithEnterKeys({{18, R"(["","0","0.conv"])"}, {21, R"(["0.bn"])"}, {29, R"(["0.bn"])"}}))) ==
        std::vector<std::string>{"0", "0.conv"});
  // A call that starts elsewhere than the module's first operator.
  CHECK(Modules(CheckpointCandidates(WithEnterKeys({{18, R"(["","0","0.conv"])"}, {26, R"(["0.bn"])"}}))) ==
        std::vector<std::string>{"0", "0.conv"});
}

TEST_CASE("checkpoint plan: ENTER must be a list of strings") {
  CHECK_THROWS_WITH(WithEnterKeys({{18, R"("0")"}}),
                    "attributed-enter.log:18: \"ENTER\" must be a list of names");
}

TEST_CASE("checkpoint plan: checkpointing block 0 lowers the peak by the 272 bytes it evicts") {
  const Trace t = LoadTrace(kFixture);
  const std::vector<CheckpointCandidate> all = CheckpointCandidates(t);
  const CheckpointSimulation none = SimulateCheckpoints(t, all, {});
  CHECK(none.peak == 1792);
  CHECK(none.script.entries.empty());
  const CheckpointSimulation block = SimulateCheckpoints(t, all, {IndexOf(all, "0")});
  // x7 256 evicted once the batch norm has read it, x11 8 + x12 8 (its saved
  // statistics, which only the backward reads) right after it: all still
  // gone at the peak's mul; the batch norm's backward rematerializes the
  // convolution (1,152) and the batch norm (136) when the memory is lower.
  // The batch norm brings back its output x10 too, which nothing reads any
  // more: evicted again at once, as torch frees what it recomputes.
  REQUIRE(block.freed.size() == 1);
  CHECK(block.freed[0] == 272);
  REQUIRE(block.script.entries.size() == 4);
  CHECK(Names(t, {block.script.entries[0].storage, block.script.entries[1].storage,
                  block.script.entries[2].storage, block.script.entries[3].storage}) ==
        std::vector<std::string>{"x7", "x11", "x12", "x10"});
  CHECK(block.peak == 1792 - 272);
  CHECK(block.clock == none.clock + 1152 + 136);
  const CheckpointSimulation bn = SimulateCheckpoints(t, all, {IndexOf(all, "0.bn")});
  CHECK(bn.freed[0] == 16);
  CHECK(bn.peak == 1792 - 16);
  CHECK(bn.clock == none.clock + 136);
}

TEST_CASE("checkpoint plan: the greedy plan reaches a budget between the floor and the peak") {
  const Trace t = LoadTrace(kFixture);
  const int64_t floor = ComputeMemoryBound(t).bytes;
  REQUIRE(floor < 1520);
  // 272 bytes for 1,288 of recompute beats 16 for 136.
  const CheckpointPlan plan = PlanCheckpoints(t, 1600);
  CHECK(plan.verdict == PlanVerdict::kFits);
  REQUIRE(plan.modules.size() == 1);
  CHECK(plan.modules[0].module == "0");
  CHECK(plan.modules[0].forward_ops == 6);
  CHECK(plan.modules[0].bytes_freed == 272);
  CHECK(plan.predicted_peak == 1520);
  CHECK(plan.unplanned_peak == 1792);
  CHECK(plan.floor == floor);
  CHECK(plan.predicted_overhead > 1.0);
  // conv 1,152 + add_ 1 + empty 1 + batch norm 136 + relu 128 + detach 1;
  // the simulation recomputes only the convolution and the batch norm.
  CHECK(plan.modules[0].forward_compute == 1419);
  CHECK(plan.predicted_overhead == Overhead(3954 + 1419, 3954));
  CHECK(plan.simulated_clock == 1 + 3954 + 1152 + 136);
  // Just under the peak, the cheapest that fits: 0.bn alone.
  const CheckpointPlan small = PlanCheckpoints(t, 1780);
  CHECK(small.verdict == PlanVerdict::kFits);
  REQUIRE(small.modules.size() == 1);
  CHECK(small.modules[0].module == "0.bn");
  CHECK(small.predicted_peak == 1776);
  // At the peak, nothing to do.
  const CheckpointPlan none = PlanCheckpoints(t, 1792);
  CHECK(none.verdict == PlanVerdict::kFits);
  CHECK(none.modules.empty());
  // Between the floor and 1,520: block 0 is the best, and then no module is
  // left that is not inside it.
  const CheckpointPlan best = PlanCheckpoints(t, floor);
  CHECK(best.verdict == PlanVerdict::kBestReached);
  CHECK(best.predicted_peak == 1520);
  // Where it peaks: the mul making x22, with x19 and x21 (256 each) and the
  // rest of the 1,520 bytes but its own 256 in use.
  CHECK(best.peak_op.rfind("mul/", 0) == 0);
  CHECK(best.peak_request == 256);
  CHECK(best.peak_in_use == 1520 - 256);
  CHECK(best.peak_pinned == 232);
}

TEST_CASE("checkpoint plan: a budget below the floor has no plan, and says why") {
  const Trace t = LoadTrace(kFixture);
  const int64_t floor = ComputeMemoryBound(t).bytes;
  const CheckpointPlan plan = PlanCheckpoints(t, floor - 1);
  CHECK(plan.verdict == PlanVerdict::kBelowFloor);
  CHECK(plan.modules.empty());
  CHECK(std::string(PlanVerdictName(plan.verdict)) == "below-floor");
}

TEST_CASE("checkpoint plan: a trace without module attribution is refused in one sentence") {
  const Trace t = ParseTraceString(
      "{\"ANNOTATION\":\"START\",\"INSTRUCTION\":\"ANNOTATE\"}\n"
      "{\"INSTRUCTION\":\"CONSTANT\",\"NAME\":\"x0\"}\n"
      "{\"INSTRUCTION\":\"MEMORY\",\"MEMORY\":\"8\",\"NAME\":\"x0\"}\n",
      "plain.log");
  try {
    PlanCheckpoints(t, 100);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    CHECK(std::string(e.what()) ==
          "plan needs a captured trace with module attribution (MODULE and PHASE keys: python -m "
          "dtrcheck.capture, docs/trace_format.md): plain.log has none");
  }
}

}  // namespace
}  // namespace dtr
