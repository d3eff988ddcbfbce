// Exhaustive search against the schedule checker and the static bound, on a
// hand-made trace and random tiny traces (seeds printed on failure). It
// steps the replay engine itself (tests/engine_test.cc checks the step API).
#include "checker/proofs/exhaustive_search.h"

#include <doctest/doctest.h>

#include "checker/proofs/memory_bound.h"
#include "checker/proofs/schedule_checker.h"
#include "model/trace_parser.h"
#include "tests/random_trace.h"

namespace dtr::testing {
namespace {

TEST_CASE("exhaustive search: hand-made trace whose answer is known") {
  // a, b = f(a) and c = g(a) are 10 bytes each; h(b, c) makes d (10); only d
  // stays referenced (pinned at the end).
  const char* text = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"ARGS":[],"INSTRUCTION":"CALL","NAME":"in","RESULT":["a"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"a"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"a"}
{"ARGS":["a"],"INSTRUCTION":"CALL","NAME":"f","RESULT":["b"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"b"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"b"}
{"ARGS":["a"],"INSTRUCTION":"CALL","NAME":"g","RESULT":["c"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"c"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"c"}
{"ARGS":["b","c"],"INSTRUCTION":"CALL","NAME":"h","RESULT":["d"],"TIME":"1"}
{"INSTRUCTION":"MEMORY","MEMORY":"10","NAME":"d"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"d"}
{"INSTRUCTION":"RELEASE","NAME":"a"}
{"INSTRUCTION":"RELEASE","NAME":"b"}
{"INSTRUCTION":"RELEASE","NAME":"c"}
)";
  Trace t = ParseTraceString(text, "fork.log");
  // g needs a, b (unless evicted) and c: 30 without eviction, 20 if b goes,
  // but then h must recompute b from a with c locked: a + c + b = 30.
  CHECK(SmallestFeasibleBudget(t) == 30);
  ExhaustiveOptions o;
  o.budget = 29;
  CHECK(SearchAllSchedules(t, o).verdict == SearchVerdict::kInfeasible);
  o.budget = 30;
  ExhaustiveResult r = SearchAllSchedules(t, o);
  REQUIRE(r.verdict == SearchVerdict::kFeasible);
  CHECK(CheckSchedule(t, 30, r.script).passed());
  // The static bound sees at most 20 + 10 at each operator.
  CHECK(ComputeMemoryBound(t).bytes == 30);
}

TEST_CASE(
    "exhaustive search: found scripts pass the checker; the static bound never exceeds the "
    "optimum") {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    INFO("seed ", seed);
    Trace trace = RandomTinyTrace(seed, 4 + static_cast<int>(seed % 7));
    int64_t best = SmallestFeasibleBudget(trace);
    REQUIRE(best >= 0);
    MemoryBound bound = ComputeMemoryBound(trace);
    CHECK(bound.bytes <= best);
    ExhaustiveOptions o;
    o.budget = best;
    ExhaustiveResult r = SearchAllSchedules(trace, o);
    REQUIRE(r.verdict == SearchVerdict::kFeasible);
    ScheduleCheck c = CheckSchedule(trace, best, r.script);
    CHECK(c.passed());
    CHECK(c.run.max_memory == best);
    if (best > 0) {
      o.budget = best - 1;
      CHECK(SearchAllSchedules(trace, o).verdict == SearchVerdict::kInfeasible);
    }
  }
}

}  // namespace
}  // namespace dtr::testing
