// Regression (issue "Nothing wrong, nothing lost", finding 1): sizes or times
// whose sum passed 2^63 overflowed silently. `gen chain --layers 2` with its
// 1 MiB sizes replaced by 2^62 made `info` print a baseline memory of 2^62
// although the true peak is 4 x 2^62, exit 0 (UBSan: signed overflow in the
// replay's budget comparison and clock). Now the parser refuses traces whose
// sizes or times sum past 2^62 (which keeps every memory sum of a replay
// below 2^63), and the engine checks the additions that recomputation can
// still push past 2^63 (clock, remat compute).
#include <doctest/doctest.h>

#include <string>

#include "checker/engine/engine.h"
#include "checker/engine/replay.h"
#include "model/error.h"
#include "tests/hand_traces.h"

namespace dtr::testing {
namespace {

constexpr int64_t k2to60 = int64_t{1} << 60;
constexpr int64_t k2to61 = int64_t{1} << 61;
constexpr int64_t k2to62 = int64_t{1} << 62;

std::string ParseError(const TraceText& text) {
  try {
    text.Parse("big.log");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_CASE("overflow: sizes summing past 2^62 are refused at the line that passes it") {
  // The trace: two layers of 2^62 bytes each.
  TraceText two_layers;
  two_layers.Call("a", {}, "x1", k2to62, 1).Call("b", {"x1"}, "x2", k2to62, 1);
  std::string message = ParseError(two_layers);
  CHECK(message.find("big.log:") == 0);
  CHECK(message.find("MEMORY sizes sum to more than 2^62") != std::string::npos);
  // Four layers of 2^60 sum to exactly 2^62: accepted, and the baseline is the true peak.
  TraceText four;
  four.Call("a", {}, "x1", k2to60, 1)
      .Call("b", {"x1"}, "x2", k2to60, 1)
      .Call("c", {"x2"}, "x3", k2to60, 1)
      .Call("d", {"x3"}, "x4", k2to60, 1);
  Trace trace = four.Parse("big.log");
  CHECK(ComputeBaseline(trace).memory == k2to62);
  // One byte more is refused.
  TraceText over;
  over.Call("a", {}, "x1", k2to60, 1)
      .Call("b", {"x1"}, "x2", k2to60, 1)
      .Call("c", {"x2"}, "x3", k2to60, 1)
      .Call("d", {"x3"}, "x4", k2to60 + 1, 1);
  CHECK(ParseError(over).find("big.log:") == 0);
}

TEST_CASE("overflow: TIME values summing past 2^62 are refused") {
  TraceText slow;
  slow.Call("a", {}, "x1", 10, k2to61).Call("b", {"x1"}, "x2", 10, k2to61).Call("c", {"x2"}, "x3", 10, 1);
  std::string message = ParseError(slow);
  CHECK(message.find("big.log:") == 0);
  CHECK(message.find("TIME values sum to more than 2^62") != std::string::npos);
}

TEST_CASE("overflow: a clock that recomputation pushes past 2^63 is an error, not a wrap") {
  // x1 takes 2^61 time units; every z_i forces nothing but gives a point to
  // evict x1 at, after which the next use of x1 recomputes it. Clock: 1 +
  // 2^61 (x1) + 3 recomputations of 2^61 passes 2^63.
  TraceText t;
  t.Call("a", {}, "x1", 10, k2to61).Call("b", {"x1"}, "x2", 10, 1);
  // Names built by append: `"z" + std::to_string(i)` inlines into a memcpy
  // that GCC 12 flags with a false -Wrestrict.
  auto name = [](char prefix, int i) { return std::string(1, prefix).append(std::to_string(i)); };
  for (int i = 1; i <= 3; ++i) t.Call("g", {}, name('z', i), 10, 1).Call("f", {"x1"}, name('y', i), 10, 1);
  Trace trace = t.Parse("slow.log");
  EngineOptions options;
  options.runtime = RuntimeKind::kV2EagerOptimized;
  Engine engine(trace, options);
  std::string message = "(no error)";
  try {
    while (engine.Advance()) {
      if (trace.op_of(engine.tensor()).name.rfind("g/", 0) == 0 && engine.Evictable(trace.tensors[0].storage))
        engine.Evict(trace.tensors[0].storage);
      engine.Compute();
    }
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message == "slow.log: the clock passed 2^63 during the replay; the trace's numbers are too large");
  CHECK(engine.clock() > k2to62);  // it got near: 1 + 3 x 2^61 before the failing addition
}

}  // namespace
}  // namespace dtr::testing
