// The exact budget atlas (checker/drivers/budget_atlas.h): intervals tile the range,
// every budget inside an interval replays to the same run (decisions
// included), the budget after an interval's run does not, a hand-worked trace
// gives its hand-worked intervals, and the atlas agrees with simrd's reference
// points.
#include "checker/drivers/budget_atlas.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "checker/engine/heuristic.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

// Every heuristic decision (index, event, chosen storage) and every eager
// eviction (event, storage), in order.
struct DecisionLog : ReplayObserver {
  std::vector<std::tuple<int64_t, int64_t, StorageId>> decisions;
  std::vector<std::pair<int64_t, StorageId>> eager;
  Flow OnDecision(const DecisionPoint& d) override {
    decisions.emplace_back(d.index, d.event, d.chosen);
    return Flow::kContinue;
  }
  Flow OnEagerEviction(const EagerEviction& e) override {
    eager.emplace_back(e.event, e.storage);
    return Flow::kContinue;
  }
  bool operator==(const DecisionLog& o) const { return decisions == o.decisions && eager == o.eager; }
};

RunSpec DtrSpec() {
  RunSpec spec;
  spec.heuristic = &FindHeuristic("DTR");
  return spec;
}

struct LoggedRun {
  RunResult result;
  DecisionLog log;
};

LoggedRun ReplayLogged(const Trace& trace, const Baseline& baseline, int64_t budget) {
  RunSpec spec = DtrSpec();
  spec.budget = budget;
  ReplayConfig config = ConfigFor(spec, baseline);
  LoggedRun run;
  config.observer = &run.log;
  run.result = Replay(trace, config);
  return run;
}

// The intervals cover [atlas.lo, atlas.hi] in order, without gap or overlap,
// each inside its own run's interval, and neighbours are different runs.
void CheckTiles(const BudgetAtlas& atlas) {
  REQUIRE(!atlas.intervals.empty());
  CHECK(atlas.intervals.front().lo == atlas.lo);
  CHECK(atlas.intervals.back().hi == atlas.hi);
  int64_t width = 0;
  for (size_t i = 0; i < atlas.intervals.size(); ++i) {
    const AtlasInterval& iv = atlas.intervals[i];
    INFO("interval ", i, " [", iv.lo, ", ", iv.hi, "]");
    CHECK(iv.lo <= iv.hi);
    CHECK(iv.run_lo <= iv.lo);
    CHECK(iv.hi <= iv.run_hi);
    if (i > 0) {
      CHECK(iv.lo == atlas.intervals[i - 1].hi + 1);
      // A new interval starts exactly where the previous run stops.
      CHECK(iv.run_lo == atlas.intervals[i - 1].run_hi + 1);
    }
    width += iv.width();
  }
  CHECK(width == atlas.hi - atlas.lo + 1);
  CHECK(atlas.summary.feasible_width + atlas.summary.infeasible_width == width);
  CHECK(atlas.summary.intervals == atlas.intervals.size());
}

// For `samples` random intervals: a logged replay at a random budget inside
// equals the one at the interval's start and the atlas' numbers; the replay
// right after the run's interval differs in a decision, the outcome or where
// the run failed.
void CheckIntervalsAreExact(const Trace& trace, const Baseline& baseline, const BudgetAtlas& atlas, int samples,
                            uint64_t seed) {
  std::mt19937_64 rng(seed);
  INFO("seed ", seed);
  for (int k = 0; k < samples; ++k) {
    const AtlasInterval& iv =
        atlas.intervals[std::uniform_int_distribution<size_t>(0, atlas.intervals.size() - 1)(rng)];
    int64_t budget = std::uniform_int_distribution<int64_t>(iv.lo, iv.hi)(rng);
    INFO("interval [", iv.lo, ", ", iv.hi, "], budget ", budget);
    LoggedRun at_lo = ReplayLogged(trace, baseline, iv.lo);
    LoggedRun inside = ReplayLogged(trace, baseline, budget);
    const RunResult& r = inside.result;
    CHECK(r.outcome == iv.behaviour.outcome);
    CHECK(std::bit_cast<uint64_t>(Overhead(r.clock, baseline.compute)) == std::bit_cast<uint64_t>(iv.overhead));
    CHECK(r.clock == iv.behaviour.clock);
    CHECK(r.heuristic_evictions == iv.behaviour.heuristic_evictions);
    CHECK(r.evictions() == iv.behaviour.evictions);
    CHECK(r.distinct_evicted == iv.behaviour.distinct_evicted);
    CHECK(r.remat_compute == iv.remat_compute);
    CHECK(r.heuristic_evals == iv.heuristic_evals);
    CHECK(r.budget_lo == iv.run_lo);
    CHECK(r.budget_hi == iv.run_hi);
    CHECK(r.max_memory == at_lo.result.max_memory);
    CHECK(r.evict_count == at_lo.result.evict_count);
    CHECK(r.events == at_lo.result.events);
    CHECK(inside.log == at_lo.log);
    if (iv.run_hi < kInfiniteBudget) {
      LoggedRun after = ReplayLogged(trace, baseline, iv.run_hi + 1);
      // Some comparison flipped: an eviction is skipped (the decision log
      // changes) or an allocation that failed now fits (the outcome or the
      // number of computations before the failure changes).
      CHECK((after.result.outcome != r.outcome || after.result.events != r.events || !(after.log == inside.log)));
    }
  }
}

// A chain a -> b -> c and d(a, c), sizes 100, times 10, 20, 30, 40; every name
// but d's output is released at the end. Worked by hand (RuntimeV2EagerOptimized, DTR):
//   B < 100:  a does not fit, nothing to evict: oom, clock 1.
//   B < 200:  b does not fit with a locked: oom, clock 11.
//   B < 300:  c evicts a; d rematerializes a, evicting b (the only unlocked
//             storage, c is locked), then d does not fit with a and c locked:
//             oom, clock 1 + 10 + 20 + 30 + 10 = 71, 2 heuristic evictions.
//   B < 400:  d evicts b (a and c locked): pass, clock 101, 1 heuristic
//             eviction; the releases then evict a and c eagerly.
//   B >= 400: no heuristic eviction; the releases evict a, b and c eagerly.
constexpr const char* kChainTrace = R"({"ANNOTATION":"START","INSTRUCTION":"ANNOTATE"}
{"ARGS":[],"INSTRUCTION":"CALL","NAME":"a","RESULT":["x1"],"TIME":"10"}
{"INSTRUCTION":"MEMORY","MEMORY":"100","NAME":"x1"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x1"}
{"ARGS":["x1"],"INSTRUCTION":"CALL","NAME":"b","RESULT":["x2"],"TIME":"20"}
{"INSTRUCTION":"MEMORY","MEMORY":"100","NAME":"x2"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x2"}
{"ARGS":["x2"],"INSTRUCTION":"CALL","NAME":"c","RESULT":["x3"],"TIME":"30"}
{"INSTRUCTION":"MEMORY","MEMORY":"100","NAME":"x3"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x3"}
{"ARGS":["x1","x3"],"INSTRUCTION":"CALL","NAME":"d","RESULT":["x4"],"TIME":"40"}
{"INSTRUCTION":"MEMORY","MEMORY":"100","NAME":"x4"}
{"ALIAS":"-1","INSTRUCTION":"ALIAS","NAME":"x4"}
{"INSTRUCTION":"RELEASE","NAME":"x1"}
{"INSTRUCTION":"RELEASE","NAME":"x2"}
{"INSTRUCTION":"RELEASE","NAME":"x3"}
)";

TEST_CASE("atlas: a hand-worked chain gives its exact intervals") {
  Trace trace = ParseTraceString(kChainTrace, "chain");
  Baseline baseline = ComputeBaseline(trace);
  REQUIRE(baseline.compute == 100);
  BudgetAtlas atlas = BuildAtlas(trace, baseline, DtrSpec(), 0, 500);
  CheckTiles(atlas);
  struct Want {
    int64_t lo, hi;
    Outcome outcome;
    int64_t clock, heuristic_evictions, evictions;
  };
  const std::vector<Want> want = {
      {0, 99, Outcome::kOom, 1, 0, 0},       {100, 199, Outcome::kOom, 11, 0, 0},
      {200, 299, Outcome::kOom, 71, 2, 2},   {300, 399, Outcome::kPass, 101, 1, 3},
      {400, 500, Outcome::kPass, 101, 0, 3},
  };
  REQUIRE(atlas.intervals.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const AtlasInterval& iv = atlas.intervals[i];
    INFO("interval ", i);
    CHECK(iv.lo == want[i].lo);
    CHECK(iv.hi == want[i].hi);
    CHECK(iv.behaviour.outcome == want[i].outcome);
    CHECK(iv.behaviour.clock == want[i].clock);
    CHECK(iv.behaviour.heuristic_evictions == want[i].heuristic_evictions);
    CHECK(iv.behaviour.evictions == want[i].evictions);
  }
  CHECK(atlas.intervals.back().run_hi == kInfiniteBudget);
  CHECK(atlas.runs == 5);
  const AtlasSummary& s = atlas.summary;
  CHECK(s.feasible_width == 201);
  CHECK(s.infeasible_width == 300);
  CHECK(s.smallest_feasible == 300);
  CHECK(s.largest_oom == 299);
  CHECK(s.holes.empty());
  CHECK(s.distinct_behaviours == 5);
  CHECK(s.bands.size() == 5);
  CheckIntervalsAreExact(trace, baseline, atlas, 10, 7);
}

TEST_CASE("atlas: the result does not depend on the number of workers") {
  Trace trace = ParseTraceString(kChainTrace, "chain");
  Baseline baseline = ComputeBaseline(trace);
  BudgetAtlas one = BuildAtlas(trace, baseline, DtrSpec(), 50, 450, 1);
  for (int jobs : {2, 4}) {
    BudgetAtlas many = BuildAtlas(trace, baseline, DtrSpec(), 50, 450, jobs);
    CheckTiles(many);
    REQUIRE(many.intervals.size() == one.intervals.size());
    for (size_t i = 0; i < one.intervals.size(); ++i) {
      CHECK(many.intervals[i].lo == one.intervals[i].lo);
      CHECK(many.intervals[i].hi == one.intervals[i].hi);
      CHECK(many.intervals[i].behaviour == one.intervals[i].behaviour);
    }
  }
  // A one-byte range is one interval clipped to it.
  BudgetAtlas single = BuildAtlas(trace, baseline, DtrSpec(), 250, 250, 2);
  REQUIRE(single.intervals.size() == 1);
  CHECK(single.intervals[0].lo == 250);
  CHECK(single.intervals[0].hi == 250);
  CHECK(single.intervals[0].run_lo == 200);
  CHECK(single.intervals[0].run_hi == 299);
}

TEST_CASE("atlas: max_runs stops the walk and says so; a cap not reached changes nothing") {
  // The chain over [0, 500] is five intervals, five replays (above).
  Trace trace = ParseTraceString(kChainTrace, "chain");
  Baseline baseline = ComputeBaseline(trace);
  BudgetAtlas capped = BuildAtlas(trace, baseline, DtrSpec(), 0, 500, 1, nullptr, {.runs = 2});
  CHECK(capped.stopped);
  CHECK(capped.runs == 2);
  CHECK(capped.covered == 200);  // [0, 99] and [100, 199]
  CHECK(capped.intervals.empty());
  CHECK(capped.summary.intervals == 0);
  // As the atlas command shows it: the complete atlas of the part walked.
  BudgetAtlas part = WalkedPart(capped);
  CHECK(part.asked_hi == 500);
  CHECK(part.hi == 199);
  REQUIRE(part.intervals.size() == 2);
  CHECK(part.intervals[1].hi == 199);
  CHECK(part.summary.intervals == 2);
  CHECK_FALSE(WalkedPart(BuildAtlas(trace, baseline, DtrSpec(), 0, 500)).asked_hi.has_value());
  BudgetAtlas roomy = BuildAtlas(trace, baseline, DtrSpec(), 0, 500, 1, nullptr, {.runs = 5});
  CHECK_FALSE(roomy.stopped);
  CheckTiles(roomy);
  CHECK(roomy.intervals.size() == 5);
  CHECK(roomy.covered == 501);
}

// A capped walk with `jobs` workers stops where the sequential walk `seq`
// stopped, with the same counts.
void CheckSameStop(const Trace& trace, const Baseline& baseline, int64_t lo, int64_t hi,
                   AtlasCap cap, const BudgetAtlas& seq, std::initializer_list<int> jobs_list) {
  for (int jobs : jobs_list) {
    INFO("jobs ", jobs);
    BudgetAtlas par = BuildAtlas(trace, baseline, DtrSpec(), lo, hi, jobs, nullptr, cap);
    CHECK(par.stopped == seq.stopped);
    CHECK(par.runs == seq.runs);
    CHECK(par.evals == seq.evals);
    CHECK(par.covered == seq.covered);
    CHECK(par.intervals.size() == seq.intervals.size());
    CHECK(par.prefix.size() == seq.prefix.size());
  }
}

TEST_CASE("atlas: runs, a cap's stop and its coverage do not depend on the number of workers") {
  // A cap counts intervals in budget order: with any number of workers it
  // stops at the same interval as one worker walking up from lo.
  Trace trace = LoadTrace(TracePath("unet"));
  Baseline baseline = ComputeBaseline(trace);
  const int64_t lo = 3525000000, hi = 3536000000;
  BudgetAtlas one = BuildAtlas(trace, baseline, DtrSpec(), lo, hi, 1);
  const size_t n = one.intervals.size();
  REQUIRE(n > 10);
  CHECK(one.runs == n);
  for (int jobs : {2, 3, 4}) {
    INFO("jobs ", jobs);
    BudgetAtlas many = BuildAtlas(trace, baseline, DtrSpec(), lo, hi, jobs);
    CHECK(many.runs == one.runs);
    CHECK(many.intervals.size() == n);
  }
  for (size_t cap : {size_t{1}, size_t{2}, n / 2, n - 1, n, n + 1}) {
    INFO("max_runs ", cap);
    BudgetAtlas seq = BuildAtlas(trace, baseline, DtrSpec(), lo, hi, 1, nullptr, {.runs = cap});
    CHECK(seq.stopped == (cap < n));
    if (cap < n) {
      CHECK(seq.runs == cap);
      CHECK(seq.covered == std::min(one.intervals[cap - 1].run_hi, hi) - lo + 1);
    }
    CheckSameStop(trace, baseline, lo, hi, {.runs = cap}, seq, {2, 3, 4});
  }
}

TEST_CASE(
    "atlas: a cap of heuristic evaluations stops where their sum in budget order reaches it, for "
    "any jobs") {
  Trace trace = LoadTrace(TracePath("unet"));
  Baseline baseline = ComputeBaseline(trace);
  const int64_t lo = 3525000000, hi = 3536000000;
  BudgetAtlas one = BuildAtlas(trace, baseline, DtrSpec(), lo, hi, 1);
  const size_t n = one.intervals.size();
  REQUIRE(n > 10);
  std::vector<int64_t> sum;  // sum[i]: evaluations of intervals 0..i, each a run of its own
  for (const AtlasInterval& iv : one.intervals)
    sum.push_back((sum.empty() ? 0 : sum.back()) + iv.heuristic_evals);
  CHECK(one.evals == sum.back());
  REQUIRE(sum[n / 2] > sum[0]);  // the runs evaluate something, so the cap can fall between them
  for (int64_t cap :
       {int64_t{1}, sum[0], sum[0] + 1, sum[n / 2] - 1, sum[n / 2], sum[n - 2], sum[n - 1] + 1}) {
    INFO("max_evals ", cap);
    // The first interval at which the sum reaches the cap, else none.
    const size_t stop = std::lower_bound(sum.begin(), sum.end(), cap) - sum.begin();
    BudgetAtlas seq = BuildAtlas(trace, baseline, DtrSpec(), lo, hi, 1, nullptr, {.evals = cap});
    CHECK(seq.stopped == (stop + 1 < n));
    if (seq.stopped) {
      CHECK(seq.runs == stop + 1);
      CHECK(seq.evals == sum[stop]);
      CHECK(seq.prefix.size() == stop + 1);
      CHECK(seq.covered == std::min(one.intervals[stop].run_hi, hi) - lo + 1);
    } else {
      CHECK(seq.intervals.size() == n);
    }
    CheckSameStop(trace, baseline, lo, hi, {.evals = cap}, seq, {2, 3});
  }
}

TEST_CASE("atlas: an empty or negative range is an error") {
  Trace trace = ParseTraceString(kChainTrace, "chain");
  Baseline baseline = ComputeBaseline(trace);
  CHECK_THROWS_WITH_AS(BuildAtlas(trace, baseline, DtrSpec(), 10, 9), "an atlas needs 0 <= lo <= hi, got budgets [10, 9]",
                       Error);
  CHECK_THROWS_AS(BuildAtlas(trace, baseline, DtrSpec(), -1, 9), Error);
}

AtlasInterval Iv(int64_t lo, int64_t hi, Outcome o, int64_t clock) {
  AtlasInterval iv;
  iv.lo = iv.run_lo = lo;
  iv.hi = iv.run_hi = hi;
  iv.behaviour.outcome = o;
  iv.behaviour.clock = clock;
  return iv;
}

TEST_CASE("atlas summary: holes need feasible budgets on both sides; bands merge look-alike neighbours") {
  using enum Outcome;
  std::vector<AtlasInterval> ivs = {
      Iv(0, 9, kOom, 5),        // leading infeasible run: not a hole
      Iv(10, 19, kPass, 50),    //
      Iv(20, 20, kOom, 7),      // hole [20, 24]: oom then thrash
      Iv(21, 24, kThrash, 9),   //
      Iv(25, 29, kPass, 40),    //
      Iv(30, 39, kPass, 40),    // same behaviour as the previous: one band
      Iv(40, 40, kOom, 7),      // hole [40, 40], same behaviour as [20, 20]
      Iv(41, 49, kPass, 40),    //
      Iv(50, 59, kThrash, 60),  // trailing infeasible run: not a hole
  };
  AtlasSummary s = SummarizeAtlas(ivs);
  CHECK(s.intervals == 9);
  CHECK(s.feasible_width == 10 + 5 + 10 + 9);
  CHECK(s.infeasible_width == 10 + 1 + 4 + 1 + 10);
  REQUIRE(s.holes.size() == 2);
  CHECK(s.holes[0].lo == 20);
  CHECK(s.holes[0].hi == 24);
  CHECK(s.holes[0].width() == 5);
  CHECK(s.holes[0].first == 2);
  CHECK(s.holes[0].last == 3);
  CHECK(s.holes[0].has_oom);
  CHECK(s.holes[0].has_thrash);
  CHECK(s.holes[1].lo == 40);
  CHECK(s.holes[1].hi == 40);
  CHECK(!s.holes[1].has_thrash);
  CHECK(s.smallest_feasible == 10);
  CHECK(s.largest_oom == 40);
  CHECK(s.largest_infeasible == 59);
  CHECK(s.distinct_behaviours == 6);  // oom/5, pass/50, oom/7, thrash/9, pass/40, thrash/60
  CHECK(s.distinct_overheads == 6);
  REQUIRE(s.bands.size() == 8);
  CHECK(s.bands[4].lo == 25);
  CHECK(s.bands[4].hi == 39);
  CHECK(s.bands[4].first == 4);
  CHECK(s.bands[4].last == 5);

  AtlasSummary none = SummarizeAtlas({Iv(0, 9, kOom, 1)});
  CHECK(!none.smallest_feasible);
  CHECK(none.largest_oom == 9);
  CHECK(none.holes.empty());
}

TEST_CASE("atlas: budgets inside an interval replay identically on U-Net and ResNet-32") {
  SUBCASE("unet 0.42-0.44") {
    Trace trace = LoadTrace(TracePath("unet"));
    Baseline baseline = ComputeBaseline(trace);
    BudgetAtlas atlas = BuildAtlas(trace, baseline, DtrSpec(), BudgetForRatio(baseline.memory, 0.42),
                                   BudgetForRatio(baseline.memory, 0.44), 2);
    CheckTiles(atlas);
    CHECK(atlas.intervals.size() > 20);
    CHECK(!atlas.summary.holes.empty());
    CheckIntervalsAreExact(trace, baseline, atlas, 12, 20240501);
  }
  SUBCASE("resnet32 around the 128-byte holes near ratio 0.10632") {
    Trace trace = LoadTrace(TracePath("resnet32"));
    Baseline baseline = ComputeBaseline(trace);
    BudgetAtlas atlas = BuildAtlas(trace, baseline, DtrSpec(), 1069690000, 1069700000, 2);
    CheckTiles(atlas);
    CHECK(atlas.intervals.size() > 5);
    CheckIntervalsAreExact(trace, baseline, atlas, 6, 20240502);
  }
}

// The reference points of simrd for ResNet-32, DTR, eager optimized runtime,
// whose ratio lies in [lo, hi].
std::vector<nlohmann::json> ResnetReference(double lo, double hi) {
  std::ifstream in(ReferenceDir() + "/resnet32--DTR--RuntimeV2EagerOptimized.jsonl");
  REQUIRE(in);
  std::string line;
  REQUIRE(std::getline(in, line));  // the header
  std::vector<nlohmann::json> points;
  while (std::getline(in, line)) {
    nlohmann::json p = nlohmann::json::parse(line);
    double r = p["ratio"].get<double>();
    if (r >= lo && r <= hi) points.push_back(p);
  }
  return points;
}

// The atlas interval holding the point's budget has simrd's result and numbers.
void CheckAgreesWithPoint(const BudgetAtlas& atlas, const Baseline& baseline, const nlohmann::json& point) {
  int64_t budget = point["budget"].get<int64_t>();
  INFO("ratio ", point["ratio"].dump(), " budget ", budget);
  CHECK(BudgetForRatio(baseline.memory, point["ratio"].get<double>()) == budget);
  auto it = std::find_if(atlas.intervals.begin(), atlas.intervals.end(),
                         [&](const AtlasInterval& iv) { return iv.lo <= budget && budget <= iv.hi; });
  REQUIRE(it != atlas.intervals.end());
  CHECK(OutcomeName(it->behaviour.outcome) == point["result"].get<std::string>());
  CHECK(it->behaviour.clock == point["clock"].get<int64_t>());
  CHECK(std::bit_cast<uint64_t>(it->overhead) == std::bit_cast<uint64_t>(point["overhead"].get<double>()));
  CHECK(it->behaviour.heuristic_evictions == point["heuristic_evictions"].get<int64_t>());
  CHECK(it->behaviour.evictions == point["evictions"].get<int64_t>());
  CHECK(it->behaviour.distinct_evicted == point["distinct_evicted"].get<int32_t>());
}

TEST_CASE("atlas: ResNet-32 agrees with simrd around every reference point in 0.085-0.125") {
  // The whole range takes ~1,300 replays (the skipped case below); here a
  // window of 2,001 bytes around each point.
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  std::vector<nlohmann::json> points = ResnetReference(0.085, 0.125);
  REQUIRE(points.size() >= 5);
  bool saw_oom = false, saw_pass = false;
  for (const nlohmann::json& p : points) {
    int64_t budget = p["budget"].get<int64_t>();
    BudgetAtlas atlas = BuildAtlas(trace, baseline, DtrSpec(), budget - 1000, budget + 1000, 2);
    CheckTiles(atlas);
    CheckAgreesWithPoint(atlas, baseline, p);
    saw_oom |= p["result"] == "oom";
    saw_pass |= p["result"] == "pass";
  }
  CHECK(saw_oom);
  CHECK(saw_pass);
}

// Slow (about 1,300 replays, 30-60 s): run with
//   build/dtrcheck_tests -tc='*whole range*' --no-skip
TEST_CASE("atlas: ResNet-32 whole range 0.085-0.125 tiles and agrees with simrd" * doctest::skip()) {
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  BudgetAtlas atlas = BuildAtlas(trace, baseline, DtrSpec(), BudgetForRatio(baseline.memory, 0.085),
                                 BudgetForRatio(baseline.memory, 0.125), 2);
  CheckTiles(atlas);
  std::vector<nlohmann::json> points = ResnetReference(0.085, 0.125);
  REQUIRE(points.size() >= 5);
  for (const nlohmann::json& p : points) CheckAgreesWithPoint(atlas, baseline, p);
  CHECK(!atlas.summary.holes.empty());
  MESSAGE(atlas.intervals.size(), " intervals, ", atlas.summary.holes.size(), " holes");
}

}  // namespace
}  // namespace dtr::testing
