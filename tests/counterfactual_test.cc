// Counterfactual blame: the hand trace where one other choice saves the run,
// a run with no alternative at all, and ResNet-32 at 0.102, each fix checked
// by an independent replay.
#include "diagnose/counterfactual.h"

#include <doctest/doctest.h>

#include "checker/drivers/sweep.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/hand_traces.h"
#include "tests/test_runs.h"

namespace dtr::testing {
namespace {

// Replays `spec` with the fix's overrides, with nothing shared with Blame().
RunResult ReplayFix(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                    const BlameFix& fix) {
  ReplayConfig c = ConfigFor(spec, baseline);
  for (const DecisionOverride& o : fix.overrides) c.overrides.emplace_back(o.index, o.replacement);
  return Replay(trace, c);
}

TEST_CASE("blame: blame6 at 31 bytes fails because DTR evicts x1; evicting q instead passes") {
  Trace trace = Blame6();
  Baseline baseline = ComputeBaseline(trace);
  BlameOptions options;
  options.jobs = 1;
  BlameResult b = Blame(trace, baseline, SpecAtBudget(31), std::nullopt, options);
  CHECK(b.run.outcome == Outcome::kOom);
  CHECK(b.goal == BlameGoal::kPass);
  CHECK(b.decisions == 1);
  REQUIRE(b.fixes.size() == 1);  // the only decision has one alternative
  const BlameFix& fix = b.fixes[0];
  REQUIRE(fix.overrides.size() == 1);
  const DecisionOverride& o = fix.overrides[0];
  CHECK(o.index == 0);
  CHECK(o.event == 4);
  CHECK(o.original == trace.tensor_named("x1").storage);
  CHECK(o.replacement == trace.tensor_named("q").storage);
  CHECK(fix.outcome == Outcome::kPass);
  CHECK(fix.verified);
  CHECK(b.replays == 1);
  RunResult again = ReplayFix(trace, baseline, SpecAtBudget(31), fix);
  CHECK(again.outcome == Outcome::kPass);
  CHECK(again.remat_compute == 1000);  // q, rematerialized for y
}

TEST_CASE("blame: no alternative, no fix; a passing run that is not slower cannot be blamed") {
  Trace trace = Remat4();
  Baseline baseline = ComputeBaseline(trace);
  // 22 bytes: OOM; each of its two decisions had a single storage in the pool.
  BlameResult b = Blame(trace, baseline, SpecAtBudget(22), std::nullopt, BlameOptions{});
  CHECK(b.run.outcome == Outcome::kOom);
  CHECK(b.decisions == 2);
  CHECK(b.replays == 0);
  CHECK(b.fixes.empty());
  CHECK_FALSE(b.budget_exhausted);
  // 31 bytes (1.25) against 28 bytes (1.5): already faster.
  CHECK_THROWS_AS(Blame(trace, baseline, SpecAtBudget(31), SpecAtBudget(28), BlameOptions{}),
                  Error);
}

TEST_CASE(
    "blame: ResNet-32 at 0.102 (OOM) against 0.101 finds single overrides that pass, verified by "
    "replay") {
  const auto [trace, baseline] = LoadWithBaseline("resnet32");
  BlameOptions options;
  options.jobs = 2;
  options.max_replays = 100;
  RunSpec run = SpecAtRatio("0.102");
  BlameResult b = Blame(trace, baseline, run, SpecAtRatio("0.101"), options);
  CHECK(b.run.outcome == Outcome::kOom);
  REQUIRE(b.divergence.has_value());
  CHECK(b.divergence->kind == DivergenceKind::kExtraDecision);
  REQUIRE_FALSE(b.fixes.empty());
  // What the unmodified run chose at each overridden decision.
  DecisionRecorder rec;
  ReplayConfig c = ConfigFor(run, baseline);
  c.observer = &rec;
  Replay(trace, c);
  for (const BlameFix& fix : b.fixes) {
    REQUIRE(fix.overrides.size() == 1);
    const DecisionOverride& o = fix.overrides[0];
    CHECK(fix.verified);
    CHECK(fix.outcome == Outcome::kPass);
    REQUIRE(o.index < static_cast<int64_t>(rec.log().decisions.size()));
    CHECK(rec.log().decisions[o.index].chosen == o.original);
    CHECK(rec.log().decisions[o.index].clock == o.clock);
    CHECK(o.replacement != o.original);
    RunResult again = ReplayFix(trace, baseline, run, fix);
    CHECK(again.outcome == Outcome::kPass);
    CHECK(Overhead(again.clock, baseline.compute) == fix.overhead);
  }
}

TEST_CASE("blame: a cap on the replays' evaluations stops the same search, at any -j") {
  const auto [trace, baseline] = LoadWithBaseline("resnet32");
  BlameOptions options;
  options.max_replays = 64;
  options.max_fixes = 1000;  // search until a cap
  options.max_evals = 0;
  options.jobs = 2;
  const RunSpec run = SpecAtRatio("0.102");
  const BlameResult all = Blame(trace, baseline, run, std::nullopt, options);
  REQUIRE(all.replays == 64);
  CHECK(all.budget_exhausted);
  // Each replay here costs about the same: a third of the evaluations stops
  // after about a third of the replays, in whole batches of 8.
  options.max_evals = all.evals / 3;
  for (int jobs : {1, 2}) {
    INFO("-j ", jobs);
    options.jobs = jobs;
    const BlameResult capped = Blame(trace, baseline, run, std::nullopt, options);
    CHECK(capped.budget_exhausted);
    CHECK(capped.evals >= options.max_evals);
    CHECK(capped.replays % 8 == 0);
    CHECK(capped.replays < all.replays);
    CHECK(capped.singles_tried == capped.replays);
    // One batch fewer would not have reached the cap.
    options.max_evals = capped.evals;
    const BlameResult exact = Blame(trace, baseline, run, std::nullopt, options);
    CHECK(exact.replays == capped.replays);
    options.max_evals = capped.evals + 1;
    CHECK(Blame(trace, baseline, run, std::nullopt, options).replays == capped.replays + 8);
    options.max_evals = all.evals / 3;
    // The fixes it found are the uncapped search's first ones.
    REQUIRE(capped.fixes.size() <= all.fixes.size());
    for (size_t i = 0; i < capped.fixes.size(); ++i)
      CHECK(capped.fixes[i].overrides[0].replacement == all.fixes[i].overrides[0].replacement);
  }
}

}  // namespace
}  // namespace dtr::testing
