// Small traces written by hand for the instability tests, in the execution-log
// format (a CALL, then a MEMORY and an ALIAS line per result). Each comment
// gives what a replay does with it, worked out by hand from simrd's rules;
// the tests check those hand-derived facts.
#pragma once

#include <fmt/core.h>

#include <string>
#include <vector>

#include "model/trace_parser.h"

namespace dtr::testing {

// Builds a trace text one instruction at a time.
class TraceText {
 public:
  // `result` = op(args), one output of `size` bytes taking `time`.
  TraceText& Call(const std::string& op, const std::vector<std::string>& args,
                  const std::string& result, int64_t size, int64_t time) {
    std::string list;
    for (const std::string& a : args) list += fmt::format("{}\"{}\"", list.empty() ? "" : ",", a);
    text_ += fmt::format(
                 R"({{"ARGS":[{}],"INSTRUCTION":"CALL","NAME":"{}","RESULT":["{}"],"TIME":"{}"}})",
                 list, op, result, time) +
             "\n";
    text_ +=
        fmt::format(R"({{"INSTRUCTION":"MEMORY","MEMORY":"{}","NAME":"{}"}})", size, result) + "\n";
    text_ += fmt::format(R"({{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"{}"}})", result) + "\n";
    return *this;
  }
  TraceText& Release(const std::string& name) {
    text_ += fmt::format(R"({{"INSTRUCTION":"RELEASE","NAME":"{}"}})", name) + "\n";
    return *this;
  }
  Trace Parse(const std::string& source) const { return ParseTraceString(text_, source); }

 private:
  std::string text_ = "{\"ANNOTATION\":\"START\",\"INSTRUCTION\":\"ANNOTATE\"}\n";
};

// x1 -> x2 -> x3 -> x4, 10 bytes and 1 time unit each, all released at the
// end (eager evictions, nothing pinned). Baseline: memory 40, compute 4.
// Program steps: 0-3 compute x1..x4, 4-7 release x1..x4.
//  - budget >= 40: no decision.
//  - budget 30..39: one decision, computing x4 (event 3, clock 4) with 30 in
//    use; the pool is {x1, x2} (x3 is x4's locked argument). e* is each
//    storage's own compute (nothing evicted yet), 1; staleness x1 = 4 - 2,
//    x2 = 4 - 3: x1 scores 1/(10*2) = 0.05, x2 1/(10*1) = 0.1; x1 goes.
//    Releases then evict x2, x3, x4 eagerly (x1 is already gone).
//  - budget 20..29: two decisions: x1 at event 2 (pool {x1}), x2 at event 3.
//  - budget 10..19: OOM at event 1 (x1 is locked as x2's argument).
inline Trace Chain4() {
  return TraceText()
      .Call("a", {}, "x1", 10, 1)
      .Call("b", {"x1"}, "x2", 10, 1)
      .Call("c", {"x2"}, "x3", 10, 1)
      .Call("d", {"x3"}, "x4", 10, 1)
      .Release("x1")
      .Release("x2")
      .Release("x3")
      .Release("x4")
      .Parse("chain4.log");
}

// x1 -> x2 -> x3, then x4 = d(x1, x3) of 5 bytes, which needs x1 again;
// everything released at the end. Baseline: memory 35, compute 4.
//  - budget >= 35: no decision, clock 5 (overhead 1.25).
//  - budget 30..34: one decision at event 3 (computing x4: 30 + 5 > budget),
//    pool {x2}: no remat, overhead 1.25.
//  - budget 25..29: x1 is evicted computing x3 (event 2, pool {x1}); x4 then
//    rematerializes x1 (event 3), evicting x2 first (pool {x2}); x4 fits
//    (20 + 5): clock 6, overhead 1.5.
//  - budget 20..24: as above, but x4 does not fit: OOM at event 4.
// So the overhead jumps by 1.2x between bytes 29 and 30, and the run turns
// feasible between bytes 24 and 25.
inline Trace Remat4() {
  return TraceText()
      .Call("a", {}, "x1", 10, 1)
      .Call("b", {"x1"}, "x2", 10, 1)
      .Call("c", {"x2"}, "x3", 10, 1)
      .Call("d", {"x1", "x3"}, "x4", 5, 1)
      .Release("x1")
      .Release("x2")
      .Release("x3")
      .Release("x4")
      .Parse("remat4.log");
}

// A run that DTR's choice makes fail and one other choice saves, at budget 31.
//   x0 = a(), x1 = b(x0); x0 is released (evicted eagerly, rematerializable);
//   q = f() costs 1000; x2 = c(x1); x3 = d(x2); x2 released; y = g(x1, x3, q)
//   of 1 byte. All 10 bytes and 1 time unit but q.
// Computing x3 (event 4) needs 40 > 31: the pool is {x1, q}. Both have
// staleness 1; x1's e* is 1 + 1 (its evicted parent x0), q's is 1000: DTR
// evicts x1 (decision 0; runner-up q). Releasing x2 leaves q and x3 (20). y
// locks x3 and q and rematerializes x1, which needs x0 back (30) and then
// x1 itself (40 > 31) with x0, x3, q all locked: OOM.
// Evicting q at decision 0 instead: releasing x2 leaves x1 and x3 (20); y
// rematerializes q (30) and fits (31): the run passes.
inline Trace Blame6() {
  return TraceText()
      .Call("a", {}, "x0", 10, 1)
      .Call("b", {"x0"}, "x1", 10, 1)
      .Release("x0")
      .Call("f", {}, "q", 10, 1000)
      .Call("c", {"x1"}, "x2", 10, 1)
      .Call("d", {"x2"}, "x3", 10, 1)
      .Release("x2")
      .Call("g", {"x1", "x3", "q"}, "y", 1, 1)
      .Release("x1")
      .Release("x3")
      .Release("q")
      .Release("y")
      .Parse("blame6.log");
}

// A feasibility inversion: a = x0 (20 bytes, time 100), x1 = b(x0) (10, 5),
// x2 = c() (10, 5), x3 = d() (7, 1), x4 = e(x3, x1, x2) (10, 100), all
// released at the end. Memory in use after each: 20, 30, 40, 47, 57 (the
// baseline memory); clock after each: 101, 106, 111, 112, 212.
//  - budget < 20: x0 does not fit: OOM, clock 1.
//  - 20..29: x1 does not fit with x0 locked: OOM, clock 101.
//  - 30..36: x2 (40 > B) evicts x0 (score 100/(20*5) = 1; x1 is fresh:
//    staleness 0, score inf); x3 fits (27); x4 (37 > B) finds x3, x1, x2
//    locked and x0 gone: OOM, clock 112, one heuristic eviction.
//  - 37..39: as above, but x4 fits (37): pass, clock 212, then 4 eager evictions.
//  - 40..46: x2 fits (40); x3 (47 > B) evicts x1 (5/(10*5) = 0.1 beats x0's
//    100/(20*10) = 0.5; x2 fresh); x4 must rematerialize x1, which does not
//    fit (37 + 10) with x0, x3, x2 locked: OOM, clock 112.
//  - 47..56: x3 fits (47); x4 (57 > B) evicts x0, the only unlocked storage:
//    pass, clock 212.
//  - >= 57: no decision: pass, clock 212.
// So it passes at 37..39, fails at 40..46 and passes from 47 on.
inline Trace Inversion5() {
  return TraceText()
      .Call("a", {}, "x0", 20, 100)
      .Call("b", {"x0"}, "x1", 10, 5)
      .Call("c", {}, "x2", 10, 5)
      .Call("d", {}, "x3", 7, 1)
      .Call("e", {"x3", "x1", "x2"}, "x4", 10, 100)
      .Release("x0")
      .Release("x1")
      .Release("x2")
      .Release("x3")
      .Release("x4")
      .Parse("inversion5.log");
}

}  // namespace dtr::testing
