// The farm codecs (checker/farm/farm_codec.h): what a task's result becomes on its
// way between MPI ranks must decode to the same value, every field and every
// double bit for bit, and truncated bytes must be refused, not misread.
#include "checker/farm/farm_codec.h"

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <string>

#include "checker/drivers/atlas_walk.h"
#include "checker/drivers/sweep.h"
#include "checker/engine/heuristic.h"
#include "checker/engine/run_result.h"
#include "diagnose/budget_curve.h"
#include "diagnose/instability_scan.h"
#include "model/error.h"
#include "tests/hand_traces.h"

namespace dtr::testing {
namespace {

RunRecord DtrAt(const Trace& trace, const Baseline& baseline, int64_t budget) {
  RunSpec s;
  s.heuristic = &FindHeuristic("DTR");
  s.budget = budget;
  return RunOne(trace, baseline, s);
}

void CheckSame(const RunResult& a, const RunResult& b) {
  CHECK(a.outcome == b.outcome);
  CHECK(a.budget == b.budget);
  CHECK(a.clock == b.clock);
  CHECK(a.remat_compute == b.remat_compute);
  CHECK(a.model_compute == b.model_compute);
  CHECK(a.heuristic_evals == b.heuristic_evals);
  CHECK(a.max_memory == b.max_memory);
  CHECK(a.bottleneck_memory == b.bottleneck_memory);
  CHECK(a.const_memory == b.const_memory);
  CHECK(a.heuristic_evictions == b.heuristic_evictions);
  CHECK(a.eager_evictions == b.eager_evictions);
  CHECK(a.distinct_heuristic_evicted == b.distinct_heuristic_evicted);
  CHECK(a.distinct_evicted == b.distinct_evicted);
  CHECK(a.evict_count == b.evict_count);
  CHECK(a.heuristic_evict_count == b.heuristic_evict_count);
  CHECK(a.events == b.events);
  CHECK(a.budget_lo == b.budget_lo);
  CHECK(a.budget_hi == b.budget_hi);
  REQUIRE(a.oom.has_value() == b.oom.has_value());
  if (a.oom) {
    CHECK(a.oom->program_op == b.oom->program_op);
    CHECK(a.oom->op == b.oom->op);
    CHECK(a.oom->tensor == b.oom->tensor);
    CHECK(a.oom->request == b.oom->request);
    CHECK(a.oom->memory_usage == b.oom->memory_usage);
    CHECK(a.oom->pinned_memory == b.oom->pinned_memory);
    CHECK(a.oom->locked_memory == b.oom->locked_memory);
    CHECK(a.oom->locked_storages == b.oom->locked_storages);
    CHECK(a.oom->remat_depth == b.oom->remat_depth);
    CHECK(a.oom->program_step == b.oom->program_step);
    CHECK(a.oom->event == b.oom->event);
    CHECK(a.oom->frames == b.oom->frames);
  }
  REQUIRE(a.script_failure.has_value() == b.script_failure.has_value());
  if (a.script_failure) {
    CHECK(a.script_failure->entry == b.script_failure->entry);
    CHECK(a.script_failure->event == b.script_failure->event);
    CHECK(a.script_failure->reason == b.script_failure->reason);
  }
}

TEST_CASE("farm codec: replays of remat4 (OOM, evictions, no decision) decode to the same RunResult") {
  Trace trace = Remat4();
  Baseline baseline = ComputeBaseline(trace);
  // 17: OOM with its context; 28: heuristic evictions; 35: none at all.
  for (int64_t budget : {17, 28, 35}) {
    INFO("budget ", budget);
    RunResult r = DtrAt(trace, baseline, budget).result;
    if (budget == 17) REQUIRE(r.oom.has_value());
    if (budget == 28) REQUIRE(r.heuristic_evictions > 0);
    std::string bytes = EncodeForFarm(r);
    CheckSame(DecodeForFarm<RunResult>(bytes), r);
    // Every proper prefix is refused with an Error.
    for (size_t cut = 0; cut < bytes.size(); ++cut) CHECK_THROWS_AS(DecodeForFarm<RunResult>(bytes.substr(0, cut)), Error);
    CHECK_THROWS_AS(DecodeForFarm<RunResult>(bytes + "x"), Error);
  }
}

TEST_CASE("farm codec: a script failure and its reason survive the trip") {
  RunResult r;
  r.outcome = Outcome::kInvalidScript;
  r.script_failure = ScriptFailure{3, 7, "storage x9 is not evictable at event 7"};
  r.evict_count = {0, 2, 0, 0, 1};
  r.heuristic_evict_count = {0, 1, 0, 0, 0};
  CheckSame(DecodeForFarm<RunResult>(EncodeForFarm(r)), r);
}

TEST_CASE("farm codec: an atlas part's pieces keep their doubles bit for bit") {
  AtlasPartWalk part;
  part.complete = true;
  AtlasInterval a;
  a.lo = 10;
  a.hi = 19;
  a.run_lo = 5;
  a.run_hi = 19;
  a.overhead = 1.0 / 3.0;
  a.evictions_per_evicted = 0.1 + 0.2;
  a.behaviour.outcome = Outcome::kThrash;
  part.pieces = {a, a};
  part.pieces[1].lo = 20;
  AtlasPartWalk back = DecodeForFarm<AtlasPartWalk>(EncodeForFarm(part));
  CHECK(back.complete);
  REQUIRE(back.pieces.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(back.pieces[i].lo == part.pieces[i].lo);
    CHECK(back.pieces[i].hi == part.pieces[i].hi);
    CHECK(back.pieces[i].run_lo == part.pieces[i].run_lo);
    CHECK(back.pieces[i].behaviour == part.pieces[i].behaviour);
    CHECK(std::bit_cast<uint64_t>(back.pieces[i].overhead) == std::bit_cast<uint64_t>(part.pieces[i].overhead));
    CHECK(std::bit_cast<uint64_t>(back.pieces[i].evictions_per_evicted) ==
          std::bit_cast<uint64_t>(part.pieces[i].evictions_per_evicted));
  }
}

TEST_CASE("farm codec: a located scan boundary of remat4 decodes to the same boundary") {
  Trace trace = Remat4();
  Baseline baseline = ComputeBaseline(trace);
  ScanOptions options;
  options.heuristic = &FindHeuristic("DTR");
  options.jobs = 1;
  ScanBoundary b = LocateBoundary(trace, baseline, options, MakeScanPoint(DtrAt(trace, baseline, 17)),
                                  MakeScanPoint(DtrAt(trace, baseline, 28)));
  b.below.ratio = ParseRatio("0.5");
  ScanBoundary back = DecodeForFarm<ScanBoundary>(EncodeForFarm(b));
  CHECK(back.last_byte == b.last_byte);
  CHECK(back.first_byte == b.first_byte);
  CHECK(back.lower_zone_to == b.lower_zone_to);
  CHECK(back.upper_zone_from == b.upper_zone_from);
  CHECK(back.lower_zone_maximal == b.lower_zone_maximal);
  CHECK(back.upper_zone_maximal == b.upper_zone_maximal);
  CHECK(back.replays == b.replays);
  for (auto [x, y] : {std::pair{&back.below, &b.below}, std::pair{&back.above, &b.above}}) {
    REQUIRE(x->ratio.has_value() == y->ratio.has_value());
    if (x->ratio) {
      CHECK(x->ratio->text == y->ratio->text);
      CHECK(std::bit_cast<uint64_t>(x->ratio->value) == std::bit_cast<uint64_t>(y->ratio->value));
    }
    CHECK(x->outcome == y->outcome);
    CHECK(std::bit_cast<uint64_t>(x->overhead) == std::bit_cast<uint64_t>(y->overhead));
    CHECK(x->budget == y->budget);
    CHECK(x->evictions == y->evictions);
    CHECK(x->heuristic_evictions == y->heuristic_evictions);
    CHECK(x->budget_lo == y->budget_lo);
    CHECK(x->budget_hi == y->budget_hi);
    CHECK(x->distinct_evicted == y->distinct_evicted);
    CHECK(x->distinct_heuristic_evicted == y->distinct_heuristic_evicted);
    CHECK(x->regime == y->regime);
  }
}

}  // namespace
}  // namespace dtr::testing
