// The frontier at an OOM and at decision points.
#include "diagnose/remat_frontier.h"

#include <doctest/doctest.h>

#include "checker/drivers/sweep.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/test_runs.h"

namespace dtr::testing {
namespace {

TEST_CASE("frontier: ResNet-32 at 0.102 OOMs under 117 pending frames with nothing left to evict") {
  const LoadedTrace resnet = LoadWithBaseline("resnet32");
  const Trace& t = resnet.trace;
  ReplayConfig config = resnet.ConfigAt("0.102");
  RunResult run = Replay(t, config);
  REQUIRE(run.oom);
  RematFrontier f = FrontierAtOom(t, config);
  CHECK(f.at_oom);
  CHECK(f.frames.size() == 118);  // the program operator and 117 rematerializations
  CHECK(f.holders_consistent);
  CHECK(f.evictable_bytes == 0);
  CHECK(f.evictable_storages == 0);
  CHECK(f.pinned_bytes == run.oom->pinned_memory);
  CHECK(f.locked_bytes == run.oom->locked_memory);
  CHECK(static_cast<int32_t>(f.locked.size()) == run.oom->locked_storages);
  CHECK(f.request == run.oom->request);
  CHECK(f.floor() > config.budget);
  CHECK(f.doomed());
  CHECK(t.tensors[f.frames.back().tensor].name == run.oom->tensor);
  CHECK(t.op_of(f.frames.front().tensor).name == run.oom->program_op);
  // Every locked storage has a holder, and the holders' locks add up.
  int64_t sum = 0;
  for (const LockedStorage& l : f.locked) {
    CHECK(!l.holders.empty());
    sum += l.size;
  }
  CHECK(sum == f.locked_bytes);
  int64_t fresh = 0;
  for (const FrontierFrame& fr : f.frames) fresh += fr.new_locked_bytes;
  CHECK(fresh == f.locked_bytes);
  CHECK(f.frames.back().completion_need == f.floor());
  CHECK(!f.predicted.empty());
  CHECK(f.predicted.front().floor == f.floor());
}

TEST_CASE("frontier: at decision points of a feasible run, the floor fits and the state matches") {
  const LoadedTrace resnet = LoadWithBaseline("resnet32");
  const Trace& t = resnet.trace;
  ReplayConfig config = resnet.ConfigAt("0.101");
  for (int64_t d : {0, 100, 321}) {
    INFO("decision ", d);
    RematFrontier f = FrontierAtDecision(t, config, d);
    CHECK(f.decision == d);
    CHECK(f.holders_consistent);
    CHECK(!f.at_oom);
    CHECK(f.floor() <= config.budget);  // the run passes: each decision ends with a fit
    CHECK(f.memory_usage + f.request >
          config.budget);  // a decision is taken because it does not fit
    CHECK(f.evictable_storages > 0);
  }
  CHECK_THROWS_WITH_AS(FrontierAtDecision(t, config, 322),
                       "decision 322 does not exist: the run has 322 decisions (0..321)", Error);
  CHECK_THROWS_WITH_AS(
      FrontierAtOom(t, config),
      "the run does not end in an OOM (result: pass); a decision point can be given instead",
      Error);
}

}  // namespace
}  // namespace dtr::testing
