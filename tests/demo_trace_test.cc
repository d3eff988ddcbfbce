// The embedded demo trace must show what docs/demo.md says it shows: on its
// default grid, DTR runs out of memory at a budget with feasible budgets below
// and above (a feasibility inversion). Expectations are derived from replays,
// not pasted numbers.
#include <doctest/doctest.h>

#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "checker/engine/heuristic.h"
#include "model/trace_parser.h"
#include "traces/demo.h"

namespace dtr::testing {
namespace {

class EvictionRecorder : public ReplayObserver {
 public:
  Flow OnDecision(const DecisionPoint& d) override {
    script.push_back({d.event, d.chosen});
    return Flow::kContinue;
  }
  std::vector<ScriptedEviction> script;
};

TEST_CASE("demo: the default grid has a feasibility inversion that is the policy's fault") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  Baseline baseline = ComputeBaseline(trace);
  std::vector<RunSpec> specs;
  for (const Ratio& r : ParseRatios(DemoRatios())) {
    RunSpec s;
    s.heuristic = &FindHeuristic("DTR");
    s.ratio = r;
    specs.push_back(s);
  }
  std::vector<RunRecord> runs = RunMany(trace, baseline, specs, 1);
  REQUIRE(runs.size() > 10);
  // The first OOM with a pass below it and a pass above it.
  int oom = -1, below = -1, above = -1;
  for (int i = 0; i < static_cast<int>(runs.size()) && above < 0; ++i) {
    Outcome o = runs[i].result.outcome;
    if (o == Outcome::kPass && oom < 0) below = i;
    if (o == Outcome::kOom && below >= 0 && oom < 0) oom = i;
    if (o == Outcome::kPass && oom >= 0) above = i;
  }
  REQUIRE(oom >= 0);
  REQUIRE(above >= 0);
  const RunResult& failed = runs[oom].result;
  INFO("OOM at ratio ", runs[oom].spec.ratio->text, " between ", runs[below].spec.ratio->text,
       " and ", runs[above].spec.ratio->text);
  // Not a grid artefact: the whole exact interval of the OOM run lies strictly
  // between the feasible runs' intervals, and both its ends replay to OOM.
  CHECK(runs[below].result.budget_hi < failed.budget_lo);
  CHECK(failed.budget_hi < runs[above].result.budget_lo);
  for (int64_t b : {failed.budget_lo, failed.budget_hi}) {
    RunSpec s = specs[oom];
    s.ratio.reset();
    s.budget = b;
    CHECK(RunOne(trace, baseline, s).result.outcome == Outcome::kOom);
  }
  // The OOM comes from a deep recursive rematerialization (as in ResNet-32).
  REQUIRE(failed.oom);
  CHECK(failed.oom->remat_depth >= 2);
  // The policy's fault: the evictions of the feasible run below, replayed as
  // a script at the OOM budget, complete within it.
  EvictionRecorder recorder;
  ReplayConfig below_config = ConfigFor(specs[below], baseline);
  below_config.observer = &recorder;
  REQUIRE(Replay(trace, below_config).outcome == Outcome::kPass);
  ReplayConfig scripted = ConfigFor(specs[oom], baseline);
  scripted.heuristic = nullptr;
  scripted.script = &recorder.script;
  RunResult certificate = Replay(trace, scripted);
  CHECK(certificate.outcome == Outcome::kPass);
  CHECK(certificate.max_memory <= failed.budget);
}

}  // namespace
}  // namespace dtr::testing
