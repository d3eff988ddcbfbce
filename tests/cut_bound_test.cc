// The keep-or-recompute cut against exhaustive search on random tiny traces
// (multi-output operators, aliases, copies and mutations; seeds printed on
// failure): the bound never passes the smallest budget some script fits,
// for the eager and the non-eager runtime.
#include "checker/proofs/cut_bound.h"

#include <doctest/doctest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "checker/engine/heuristic.h"
#include "checker/engine/replay.h"
#include "checker/proofs/exhaustive_search.h"
#include "checker/proofs/memory_bound.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"
#include "tests/test_paths.h"
#include "traces/generators.h"

namespace dtr::testing {
namespace {

// Whether a refutation goes through the frames of the final pins: made
// there, or carrying a storage they showed must stay material.
bool ThroughFinalPins(const CutArgument& a) {
  return a.op == kFinalPins ||
         std::find(a.kept_since.begin(), a.kept_since.end(), kFinalPins) != a.kept_since.end();
}

// The shape of a checkpoints argument (what its claim rests on is checked by
// the exhaustive optima): each span is a path of arguments from an argument
// of its later operator, made before `op`; spans are disjoint, avoid op's
// arguments and outputs, and the charge is the sum of their smallest storages.
void CheckSpans(const Trace& trace, const CutArgument& a) {
  REQUIRE(a.kind == CutArgument::Kind::kCheckpoints);
  REQUIRE(a.spans.size() == a.span_ops.size());
  REQUIRE(a.spans.size() == a.cut_storages.size());
  CHECK(a.need == ComputeMemoryBound(trace).per_op[a.op].total());
  CHECK(a.need + a.cut > a.budget);
  auto storage = [&](TensorId t) { return trace.tensors[t].storage; };
  auto maker = [&](StorageId s) { return trace.tensors[trace.storages[s].root].op; };
  auto argument_of = [&](OpId o, StorageId s) {
    for (TensorId t : trace.ops[o].args)
      if (storage(t) == s) return true;
    return false;
  };
  std::set<StorageId> seen;
  const Operator& op = trace.ops[a.op];
  for (TensorId t : op.args) seen.insert(storage(t));
  for (int32_t i = 0; i < op.num_outputs; ++i) seen.insert(storage(op.first_output + i));
  int64_t charge = 0;
  for (size_t i = 0; i < a.spans.size(); ++i) {
    const std::vector<StorageId>& span = a.spans[i];
    REQUIRE_FALSE(span.empty());
    CHECK(a.span_ops[i] > a.op);
    CHECK(argument_of(a.span_ops[i], span[0]));
    CHECK(maker(span[0]) < a.op);
    int64_t least = std::numeric_limits<int64_t>::max();
    for (size_t k = 0; k < span.size(); ++k) {
      CHECK(seen.insert(span[k]).second);
      CHECK_FALSE(trace.ops[maker(span[k])].is_constant);
      if (k > 0) CHECK(argument_of(maker(span[k - 1]), span[k]));
      least = std::min(least, trace.storages[span[k]].size);
    }
    CHECK(trace.storages[a.cut_storages[i]].size == least);
    charge += least;
  }
  CHECK(charge == a.cut);
}

// For each seed and runtime: optimum >= cut bound >= static bound, and the
// refutation at a budget agrees with the bound. Returns how many bounds the
// final pins' frames raised.
int CrossCheck(uint64_t first, uint64_t seeds, int base_storages) {
  int stronger = 0, exact = 0, compared = 0, pins = 0, held = 0, checkpoints = 0, stacked = 0,
      remade = 0;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    Trace trace = RandomTinyTrace(seed, base_storages + static_cast<int>(seed % 5));
    MemoryBound stat = ComputeMemoryBound(trace);
    for (bool eager : {true, false}) {
      INFO("seed ", seed, std::string(eager ? " eager" : " not eager"));
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
        pins += ThroughFinalPins(arg);
        if (cut.attained_by.kind == CutArgument::Kind::kCheckpoints)
          CheckSpans(trace, cut.attained_by);
      }
      stronger += cut.bytes > stat.bytes;
      exact += cut.bytes == best;
      CutOptions without = o;
      without.held_to_end = false;
      int64_t before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      held += before < cut.bytes;
      without = o;
      without.checkpoints = false;
      before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      checkpoints += before < cut.bytes;
      without = o;
      without.stacked = false;
      before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      stacked += before < cut.bytes;
      without = o;
      without.remade = false;
      before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      remade += before < cut.bytes;
    }
  }
  MESSAGE(compared, " (trace, runtime) pairs: the cut beats the static bound on ", stronger,
          " (through the final pins on ", pins, ", raised by the storages the final pins need on ",
          held, ", by checkpoints on ", checkpoints, ", by the stacked argument on ", stacked,
          ", by where dead storages are remade on ", remade, ") and meets the optimum on ", exact);
  return pins;
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

int CrossCheckShaped(uint64_t first, uint64_t seeds, int scale = 0) {
  int stronger = 0, exact = 0, compared = 0, carried = 0, pins = 0, held = 0, checkpoints = 0,
      stacked = 0, remade = 0;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    Trace trace = ParseTraceString(ShapedTrace(seed, scale), "shaped.log");
    MemoryBound stat = ComputeMemoryBound(trace);
    for (bool eager : {true, false}) {
      INFO("seed ", seed, std::string(eager ? " eager" : " not eager"));
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
      pins += cut.raised && ThroughFinalPins(cut.attained_by);
      if (cut.raised && cut.attained_by.kind == CutArgument::Kind::kCheckpoints)
        CheckSpans(trace, cut.attained_by);
      CutOptions without = o;
      without.held_to_end = false;
      int64_t before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      held += before < cut.bytes;
      without = o;
      without.checkpoints = false;
      before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      checkpoints += before < cut.bytes;
      without = o;
      without.stacked = false;
      before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      stacked += before < cut.bytes;
      without = o;
      without.remade = false;
      before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      remade += before < cut.bytes;
    }
  }
  MESSAGE(compared, " shaped (trace, runtime) pairs: the cut beats the static bound on ", stronger,
          " (with storages kept across frames on ", carried, ", through the final pins on ", pins,
          ", raised by the storages the final pins need on ", held, ", by checkpoints on ",
          checkpoints, ", by the stacked argument on ", stacked,
          ", by where dead storages are remade on ", remade, ") and meets the optimum on ", exact);
  return pins;
}

TEST_CASE("cut bound: never above the exhaustive optimum on small generated networks") {
  // Some of these keep weight gradients to the end: the final pins' frames
  // must raise some bounds, and stay under the optimum.
  CHECK(CrossCheckShaped(1, 24) > 0);
}

struct ChainCounts {
  int compared = 0, raised = 0, beside = 0, beside_exact = 0;
};
// Lock chains against exhaustive search: how many bounds the checkpoints
// argument raised, and how many were raised by the checkpoints beside a
// recomputation ((C+)) alone (and of those, how many to the optimum), of how
// many compared. Long chains have 9 to 12 steps, where a backward step's
// recomputation runs while the checkpoints of the steps after it are held.
ChainCounts CrossCheckChains(uint64_t first, uint64_t seeds, bool long_chains = false) {
  ChainCounts n;
  int exact = 0;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    LockChainOptions shape;  // from the seed
    if (long_chains) {
      std::mt19937_64 rng(seed);
      auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
      shape = {.steps = pick(9, 12), .a = pick(2, 4), .h = pick(1, 2), .g = 1, .swaps = pick(0, 1) == 1};
    }
    Trace trace = ParseTraceString(LockChainText(seed, shape), "chain.log");
    MemoryBound stat = ComputeMemoryBound(trace);
    for (bool eager : {true, false}) {
      INFO("seed ", seed, std::string(eager ? " eager" : " not eager"),
           std::string(long_chains ? " long" : ""));
      const int64_t best = SmallestFeasibleBudget(trace, eager, long_chains ? 2'000'000 : 500'000);
      if (best < 0) continue;
      ++n.compared;
      CutOptions o;
      o.eager = eager;
      const CutBound cut = ComputeCutBound(trace, stat, best, o);
      CHECK(cut.bytes <= best);
      exact += cut.bytes == best;
      CutOptions without = o;
      without.checkpoints = false;
      const int64_t before = ComputeCutBound(trace, stat, best, without).bytes;
      CHECK(before <= cut.bytes);
      CutOptions alone = o;
      alone.checkpoints_beside = false;
      const int64_t plain = ComputeCutBound(trace, stat, best, alone).bytes;
      CHECK(plain <= cut.bytes);
      if (plain < cut.bytes) {
        ++n.beside;
        n.beside_exact += cut.bytes == best;
        CHECK_FALSE(RefuteByCut(trace, stat, cut.bytes - 1, alone, nullptr));
      }
      if (before < cut.bytes) {
        ++n.raised;
        REQUIRE(cut.attained_by.kind == CutArgument::Kind::kCheckpoints);
        CheckSpans(trace, cut.attained_by);
        CutArgument arg;
        CHECK(RefuteByCut(trace, stat, cut.bytes - 1, o, &arg));
        CHECK_FALSE(RefuteByCut(trace, stat, cut.bytes, o, nullptr));
      }
    }
  }
  MESSAGE(n.compared, std::string(long_chains ? " long" : ""), " chains: checkpoints raise the bound on ",
          n.raised, " (", n.beside, " of them only with the checkpoints beside a recomputation, ",
          n.beside_exact, " of those to the optimum); it meets the optimum on ", exact);
  return n;
}

TEST_CASE("cut bound: checkpoints on chains whose frames lock, against exhaustive search") {
  const ChainCounts counts = CrossCheckChains(1, 60);
  CHECK(counts.raised * 3 > counts.compared);
  CHECK(counts.beside > 0);
}

TEST_CASE("cut bound: checkpoints beside a recomputation on long chains, against exhaustive search") {
  CHECK(CrossCheckChains(1, 24, /*long_chains=*/true).beside > 0);
}

// The bisection walks the end of the program first and the whole program
// only where that leaves a budget standing. At resolution 1 that finds the
// whole walk's threshold exactly, however shallow the first walks: the least
// budget the whole walk does not refute, above one it does.
TEST_CASE("cut bound: walking the end first finds the whole walk's threshold") {
  int deep = 0, compared = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Trace trace = ParseTraceString(ShapedTrace(seed, 1), "shaped.log");
    MemoryBound stat = ComputeMemoryBound(trace);
    for (bool eager : {true, false}) {
      INFO("seed ", seed, std::string(eager ? " eager" : " not eager"));
      ReplayConfig unbounded;  // no evictions: its peak is a budget some script fits
      unbounded.runtime = eager ? RuntimeKind::kV2EagerOptimized : RuntimeKind::kV2Optimized;
      const int64_t top = Replay(trace, unbounded).max_memory;
      CutOptions whole;
      whole.eager = eager;
      whole.first_depth = static_cast<int32_t>(trace.ops.size()) + 1;
      const CutBound expected = ComputeCutBound(trace, stat, top, whole);
      CHECK(expected.whole_walks + expected.checkpoint_tests == expected.tests);
      for (int32_t depth : {1, 3, 8}) {
        INFO("first depth ", depth);
        CutOptions o = whole;
        o.first_depth = depth;
        const CutBound cut = ComputeCutBound(trace, stat, top, o);
        CHECK(cut.bytes == expected.bytes);
        CHECK_FALSE(RefuteByCut(trace, stat, cut.bytes, o, nullptr));
        if (cut.bytes > stat.bytes) {
          CutArgument arg;
          CHECK(RefuteByCut(trace, stat, cut.bytes - 1, o, &arg));
          CHECK(cut.attained_by.budget == cut.bytes - 1);
        }
        ++compared;
        deep += cut.whole_walks > 2;  // a whole walk refuted what the end did not
      }
    }
  }
  MESSAGE(compared, " bisections; a whole walk refuted below the end's threshold in ", deep);
  CHECK(deep > 0);
}

// The final pins: `a` (12 bytes) is pinned before `s` (5) at the end.
// Recomputing `s` there needs `x`, which died after `s` was made: its
// recomputation costs 1 + 10 + 12 (`a` pinned) > 21 bytes, and so does `s`'s
// own with `x` locked. So `s` must stay material through q, whose static need
// (21) is the static bound: 26. The best schedule evicts `a` at q and
// recomputes it at the end; the walk used to start from nothing kept at q.
constexpr const char* kFinalPinsTrace = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"INSTRUCTION":"CONSTANT","NAME":"w"}
{"INSTRUCTION":"MEMORY","MEMORY":"1","NAME":"w"}
{"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"k0","RESULT":["a"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"12","NAME":"a"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"a"}
{"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"k","RESULT":["x"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"x"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x"}
{"ARGS":["x"],"INSTRUCTION":"CALL","NAME":"h","RESULT":["s"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"5","NAME":"s"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"s"}
{"INSTRUCTION":"RELEASE","NAME":"x"}
{"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"p","RESULT":["t"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"14","NAME":"t"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"t"}
{"ARGS":["t"],"INSTRUCTION":"CALL","NAME":"q","RESULT":["u"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"6","NAME":"u"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"u"}
{"INSTRUCTION":"RELEASE","NAME":"t"}
{"INSTRUCTION":"RELEASE","NAME":"u"}
)";

TEST_CASE("cut bound: a storage the final pins cannot recompute stays material to the end") {
  Trace trace = ParseTraceString(kFinalPinsTrace, "pins.log");
  MemoryBound stat = ComputeMemoryBound(trace);
  CHECK(stat.bytes == 21);
  for (bool eager : {true, false}) {
    INFO("eager ", eager);
    CHECK(SmallestFeasibleBudget(trace, eager) == 26);
    CutOptions o;
    o.eager = eager;
    CutBound cut = ComputeCutBound(trace, stat, 26, o);
    CHECK(cut.bytes == 26);
    CHECK(cut.attained_by.op == kFinalPins);
    CHECK(cut.attained_by.kind == CutArgument::Kind::kCut);
    CHECK(cut.attained_by.need + cut.attained_by.cut == 26);
    REQUIRE(cut.attained_by.cut_storages.size() == 1);
    CHECK(trace.tensors[trace.storages[cut.attained_by.cut_storages[0]].root].name == "s");
  }
}

// A storage the final pins need, charged where it already exists: `g` (5
// bytes, pinned at the end) is made from `a`, which dies before the static
// bound's operator q (21). If neither `g` nor `a` is material at q, `g` is
// made again after q, and `a` with it: f recomputed in the frame of r (u
// pre-locked before c) or of the final pins (z pinned before g) holds 24
// bytes. So below 24 memory at q holds g or a beside its 21 bytes. The frame
// of the final pins sees g and a as two equal cuts at r (9 bytes): no
// storage in every cut, nothing carried; without the storages the final
// pins need the bound is 22 (c kept at q). The exhaustive optimum is 24.
constexpr const char* kLateRecomputationTrace = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"INSTRUCTION":"CONSTANT","NAME":"w"}
{"INSTRUCTION":"MEMORY","MEMORY":"1","NAME":"w"}
{"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"k","RESULT":["z"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"6","NAME":"z"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"z"}
{"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"k2","RESULT":["b"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"12","NAME":"b"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"b"}
{"ARGS":["b"],"INSTRUCTION":"CALL","NAME":"f","RESULT":["a"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"5","NAME":"a"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"a"}
{"INSTRUCTION":"RELEASE","NAME":"b"}
{"ARGS":["a"],"INSTRUCTION":"CALL","NAME":"h","RESULT":["g"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"5","NAME":"g"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"g"}
{"ARGS":["a"],"INSTRUCTION":"CALL","NAME":"m","RESULT":["c"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"1","NAME":"c"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"c"}
{"INSTRUCTION":"RELEASE","NAME":"a"}
{"ARGS":["c"],"INSTRUCTION":"CALL","NAME":"n","RESULT":["e"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"1","NAME":"e"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"e"}
{"INSTRUCTION":"RELEASE","NAME":"e"}
{"ARGS":["w"],"INSTRUCTION":"CALL","NAME":"p1","RESULT":["t"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"14","NAME":"t"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"t"}
{"ARGS":["t"],"INSTRUCTION":"CALL","NAME":"q","RESULT":["u"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"6","NAME":"u"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"u"}
{"INSTRUCTION":"RELEASE","NAME":"t"}
{"ARGS":["u","c"],"INSTRUCTION":"CALL","NAME":"r","RESULT":["v"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"1","NAME":"v"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"v"}
{"INSTRUCTION":"RELEASE","NAME":"u"}
{"INSTRUCTION":"RELEASE","NAME":"c"}
)";

TEST_CASE("cut bound: a storage the final pins need is charged where it exists before them") {
  Trace trace = ParseTraceString(kLateRecomputationTrace, "late.log");
  MemoryBound stat = ComputeMemoryBound(trace);
  CHECK(stat.bytes == 21);
  for (bool eager : {true, false}) {
    INFO("eager ", eager);
    const int64_t best = SmallestFeasibleBudget(trace, eager);
    CutOptions o;
    o.eager = eager;
    CutBound cut = ComputeCutBound(trace, stat, best, o);
    CHECK(cut.bytes <= best);
    o.held_to_end = false;
    CutBound before = ComputeCutBound(trace, stat, best, o);
    CHECK(before.bytes <= cut.bytes);
    if (!eager) continue;  // nothing dies: `a` stays material until evicted
    CHECK(best == 24);
    CHECK(before.bytes == 22);
    CHECK(cut.bytes == 24);
    CHECK(cut.attained_by.op == kFinalPins);
    CHECK(trace.ops[cut.attained_by.previous].name == "q/8");
    CHECK(cut.attained_by.need + cut.attained_by.carried + cut.attained_by.cut > 23);
    REQUIRE(cut.attained_by.cut_storages.size() == 1);
    const std::string cut_name =
        trace.tensors[trace.storages[cut.attained_by.cut_storages[0]].root].name;
    CHECK((cut_name == "g" || cut_name == "a"));
  }
}

// Builds a trace's text for the generators below: one constant "w" of one
// byte, then one-output calls of time 1 and releases.
struct TraceWriter {
  std::string text = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"})"
                     "\n";
  TraceWriter() {
    Line({{"INSTRUCTION", "CONSTANT"}, {"NAME", "w"}});
    Line({{"INSTRUCTION", "MEMORY"}, {"NAME", "w"}, {"MEMORY", "1"}});
  }
  void Line(const nlohmann::json& j) { text += j.dump() + "\n"; }
  void Call(const std::string& op, std::vector<std::string> args, const std::string& out,
            int size) {
    Line({{"INSTRUCTION", "CALL"}, {"NAME", op}, {"ARGS", args}, {"RESULT", {out}}, {"TIME", "1"}});
    Line({{"INSTRUCTION", "MEMORY"}, {"NAME", out}, {"MEMORY", std::to_string(size)}});
    Line({{"INSTRUCTION", "ALIAS"}, {"NAME", out}, {"ALIAS", "-1"}});
  }
  void Release(const std::string& name) { Line({{"INSTRUCTION", "RELEASE"}, {"NAME", name}}); }
};

// The shape of kLateRecomputationTrace with random sizes, one or two
// gradients, an optional name pinned before them and either argument order at
// r: the bound with the storages the final pins need stays under the
// exhaustive optimum, and raises some bounds.
std::string LateGradientTrace(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto size = [&] { return std::uniform_int_distribution<int>(1, 16)(rng); };
  auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  TraceWriter w;
  // Each call draws its size after the arguments' draws, as before.
  auto call = [&](const std::string& op, std::vector<std::string> args, const std::string& out) {
    w.Call(op, std::move(args), out, size());
  };
  auto release = [&](const std::string& name) { w.Release(name); };
  if (coin()) call("k", {"w"}, "z");
  call("k2", {"w"}, "b");
  call("f", {"b"}, "a");
  release("b");
  call("h", {"a"}, "g");
  if (coin()) call("h2", {"a"}, "g2");
  call("m", {"a"}, "c");
  release("a");
  call("n", {"c"}, "e");
  release("e");
  call("p1", {"w"}, "t");
  call("q", {"t"}, "u");
  release("t");
  if (coin())
    call("r", {"u", "c"}, "v");
  else
    call("r", {"c", "u"}, "v");
  release("u");
  release("c");
  return w.text;
}

// For seeds 1..seeds of `make` and both runtimes: the bound stays under the
// exhaustive optimum and at least the bound with `off` applied to its
// options. Returns the pairs compared and how many `off` lowered.
template <typename Make, typename Off>
std::pair<int, int> RaisedAgainstExhaustive(uint64_t seeds, Make make, Off off) {
  int raised = 0, compared = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    Trace trace = ParseTraceString(make(seed), "generated.log");
    MemoryBound stat = ComputeMemoryBound(trace);
    for (bool eager : {true, false}) {
      INFO("seed ", seed, std::string(eager ? " eager" : " not eager"));
      const int64_t best = SmallestFeasibleBudget(trace, eager);
      if (best < 0) continue;  // the search gave up
      ++compared;
      CutOptions o;
      o.eager = eager;
      CutBound cut = ComputeCutBound(trace, stat, best, o);
      CHECK(cut.bytes <= best);
      off(o);
      const int64_t before = ComputeCutBound(trace, stat, best, o).bytes;
      CHECK(before <= cut.bytes);
      raised += before < cut.bytes;
    }
  }
  return {compared, raised};
}

TEST_CASE("cut bound: storages the final pins need, against exhaustive search") {
  auto [compared, raised] =
      RaisedAgainstExhaustive(150, LateGradientTrace, [](CutOptions& o) { o.held_to_end = false; });
  MESSAGE(compared, " (trace, runtime) pairs: raised by the storages the final pins need on ",
          raised);
  CHECK(raised > 0);
}

// Two or three backward-like chains (each from the previous one's output or
// from the constant), each a gradient g_i (held to the end) made through an
// operator m_i whose arguments and output are large and die
// (so bringing g_i back after a later operator means recomputing m_i), then
// one large operator q. A schedule that drops the gradients at q must bring
// them back later, and the last m_i it recomputes runs beside the other
// gradients (or what they are made from): the stacked argument (E'). The
// bound with it stays under the exhaustive optimum, and raises some bounds.
std::string StackedGradientTrace(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  TraceWriter w;
  const int chains = uniform(2, 3);
  std::string last;  // the previous chain's output, an argument of the next
  for (int i = 0; i < chains; ++i) {
    const std::string n = std::to_string(i);
    const bool linked = !last.empty() && uniform(0, 1) == 1;
    w.Call("k" + n, linked ? std::vector<std::string>{last} : std::vector<std::string>{"w"}, "a" + n,
         uniform(2, 8));
    w.Call("m" + n, {"a" + n}, "e" + n, uniform(2, 8));
    w.Release("a" + n);
    w.Call("h" + n, {"e" + n}, "g" + n, uniform(1, 4));
    if (!last.empty()) w.Release(last);
    last = "e" + n;
  }
  w.Release(last);
  w.Call("p", {"w"}, "t", uniform(4, 16));
  w.Call("q", {"t"}, "u", uniform(4, 16));
  w.Release("t");
  w.Release("u");
  return w.text;
}

TEST_CASE("cut bound: gradients held while another is recomputed, against exhaustive search") {
  auto [compared, raised] =
      RaisedAgainstExhaustive(200, StackedGradientTrace, [](CutOptions& o) { o.stacked = false; });
  MESSAGE(compared, " (trace, runtime) pairs: raised by the stacked argument on ", raised);
  CHECK(raised > 0);
}

// The backward of a block with two branches, as InceptionV4's reduction
// blocks: branch one's input gradient g1 is made from x and an intermediate
// gradient b (which dies at once), branch two's g2 from x and the incoming
// gradient; then s = g1 + g2. At g2's computation a schedule holds g1, or
// recomputes it in s's frame from what it holds: b is dead by then and only
// a frame that reaches b's maker could bring it back, and g2's frame does
// not (r'). Random sizes, an optional operator between g1 and g2, either
// argument order at s. The bound with (r') stays under the exhaustive
// optimum, and raises some bounds.
std::string BranchGradientTrace(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  TraceWriter w;
  const int big = uniform(2, 12);
  w.Call("k", {"w"}, "x", uniform(1, 8));
  w.Call("j", {"w"}, "h", uniform(1, 16));
  w.Call("a", {"h"}, "y", uniform(1, 8));
  w.Release("h");
  w.Call("d", {"w"}, "gy", uniform(1, 8));
  w.Call("bn", {"y", "gy"}, "b", uniform(1, big));
  w.Release("y");
  w.Call("conv", {"x", "b"}, "g1", big);
  w.Release("b");
  if (uniform(0, 1) == 1) {
    w.Call("o", {"gy"}, "z", uniform(1, 4));
    w.Release("z");
  }
  w.Call("pool", {"gy", "x"}, "g2", uniform(2, 12));
  w.Release("gy");
  if (uniform(0, 1) == 1)
    w.Call("add", {"g1", "g2"}, "s", uniform(2, 12));
  else
    w.Call("add", {"g2", "g1"}, "s", uniform(2, 12));
  w.Release("g1");
  w.Release("g2");
  w.Call("t", {"s", "x"}, "r", uniform(1, 8));
  w.Release("s");
  w.Release("x");
  return w.text;
}

TEST_CASE("cut bound: a dead storage only a later frame could remake, against exhaustive search") {
  auto [compared, raised] =
      RaisedAgainstExhaustive(200, BranchGradientTrace, [](CutOptions& o) { o.remade = false; });
  MESSAGE(compared, " (trace, runtime) pairs: raised by where dead storages are remade on ",
          raised);
  CHECK(raised > 0);
}

TEST_CASE("cut bound: long cross-check (run with --no-skip)" * doctest::skip()) {
  CrossCheck(1000, 2000, 6);
  CrossCheck(5000, 400, 10);
  CrossCheckShaped(100, 600);
  CrossCheckShaped(2000, 300, 1);
  CrossCheckChains(1000, 2000);
  CrossCheckChains(1000, 300, /*long_chains=*/true);
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
  // Its end first: within the resolution of the whole walk's threshold.
  CHECK(RefuteByCut(trace, stat, cut.bytes - 1, o, nullptr));
  CHECK_FALSE(RefuteByCut(trace, stat, cut.bytes - 1 + o.resolution, o, nullptr));
  CHECK(cut.whole_walks < cut.tests);
}

}  // namespace
}  // namespace dtr::testing
