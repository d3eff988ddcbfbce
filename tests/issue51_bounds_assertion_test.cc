// Issue 51, item 7: a heuristic run of `bounds` that stops where simrd
// asserts (diagnose/feasibility_bounds.h). The comment says what happened
// before.
#include <doctest/doctest.h>

#include <string>

#include "checker/engine/heuristic.h"
#include "diagnose/feasibility_bounds.h"
#include "model/trace_parser.h"

namespace dtr::testing {
namespace {

// Item 7: one DTR grid run of `bounds` hit simrd's region assertion (which
// dtrcheck reproduces faithfully), and bounds exited with status 3, no bound
// and no schedule. Random tiny trace 45 (7 storages; multi-output operators
// and an alias) does it at ratio 1. The heuristic's row says so, and the rest
// of the answer stands.
TEST_CASE("issue 51: a heuristic run where simrd asserts does not end bounds") {
  const std::string text = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"ARGS":[],"INSTRUCTION":"CALL","NAME":"input","RESULT":["x0"],"TIME":"8"}
{"INSTRUCTION":"MEMORY","MEMORY":"32","NAME":"x0"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x0"}
{"ARGS":["x0"],"INSTRUCTION":"CALL","NAME":"op0","RESULT":["x1","x2"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"64","NAME":"x1"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x1"}
{"INSTRUCTION":"MEMORY","MEMORY":"16","NAME":"x2"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x2"}
{"ARGS":["x1","x2","x0"],"INSTRUCTION":"CALL","NAME":"op1","RESULT":["x3","x4"],"TIME":"0"}
{"INSTRUCTION":"MEMORY","MEMORY":"0","NAME":"x3"}
{"ALIAS":"0","INSTRUCTION":"ALIAS","NAME":"x3"}
{"INSTRUCTION":"MEMORY","MEMORY":"16","NAME":"x4"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x4"}
{"INSTRUCTION":"RELEASE","NAME":"x0"}
{"ARGS":["x1"],"INSTRUCTION":"CALL","NAME":"op2","RESULT":["x5"],"TIME":"2"}
{"INSTRUCTION":"MEMORY","MEMORY":"16","NAME":"x5"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x5"}
{"INSTRUCTION":"RELEASE","NAME":"x5"}
{"INSTRUCTION":"RELEASE","NAME":"x3"}
{"ARGS":["x2","x2","x4"],"INSTRUCTION":"CALL","NAME":"op3","RESULT":["x6"],"TIME":"0"}
{"INSTRUCTION":"MEMORY","MEMORY":"0","NAME":"x6"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x6"}
{"INSTRUCTION":"RELEASE","NAME":"x2"}
{"ARGS":["x1","x4"],"INSTRUCTION":"CALL","NAME":"op4","RESULT":["x7"],"TIME":"0"}
{"INSTRUCTION":"MEMORY","MEMORY":"16","NAME":"x7"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x7"}
{"INSTRUCTION":"RELEASE","NAME":"x7"}
)";
  Trace trace = ParseTraceString(text, "random-45.log");
  Baseline baseline = ComputeBaseline(trace);
  BoundsOptions o;
  o.heuristics = {&FindHeuristic("DTR"), &FindHeuristic("LRU")};
  o.jobs = 1;
  o.windows = 0;
  o.search_seconds = 1;
  o.plan_seconds = 1;
  BoundsReport r = ComputeBounds(trace, baseline, o);
  REQUIRE(r.heuristics.size() == 2);
  const HeuristicBound& dtr = r.heuristics[0];
  CHECK(dtr.simrd_assertions == 1);
  REQUIRE(dtr.simrd_assertion_at);
  CHECK(dtr.simrd_assertion_at->value == 1.0);
  CHECK(dtr.simrd_assertion ==
        "random-45.log:24: an evicted storage is missing from a region frontier (simrd stops with an "
        "assertion here)");
  CHECK_FALSE(dtr.smallest_feasible);
  const HeuristicBound& lru = r.heuristics[1];
  CHECK(lru.simrd_assertions == 0);
  CHECK(lru.smallest_feasible);
  REQUIRE(r.best);
  CHECK(r.best->check.passed());
  CHECK(r.proven_infeasible_below <= r.best->budget);
}

}  // namespace
}  // namespace dtr::testing
