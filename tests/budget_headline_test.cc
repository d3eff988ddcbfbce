// The headline of a report (diagnose/budget_headline.h) on hand-made rows
// above a small trace's proven floor: the smallest pass is exact only when
// every budget from the floor up to it is known to fail; failing bands carry
// their verdicts; a cliff is only between neighbouring budgets; and the
// rendered items say the same (reports/report_headline.h).
#include <doctest/doctest.h>

#include "checker/proofs/memory_bound.h"
#include "diagnose/budget_headline.h"
#include "reports/report_headline.h"
#include "tests/hand_traces.h"

namespace dtr::testing {
namespace {

ScanPoint Point(Outcome o, double overhead, int64_t lo, int64_t hi) {
  ScanPoint p;
  p.outcome = o;
  p.overhead = overhead;
  p.budget = lo;
  p.budget_lo = lo;
  p.budget_hi = hi;
  return p;
}

TEST_CASE("headline: the smallest pass is exact when every budget from the floor up to it fails") {
  const Trace trace = Chain4();
  const int64_t f = ComputeMemoryBound(trace).bytes;
  REQUIRE(f > 0);
  std::vector<ScanPoint> points = {
      Point(Outcome::kOom, 0, f, f + 99),
      Point(Outcome::kPass, 2.0, f + 100, f + 199),
      Point(Outcome::kOom, 0, f + 200, f + 260),          // an inversion
      Point(Outcome::kPass, 1.5, f + 261, f + 399),
      Point(Outcome::kPass, 1.0, f + 400, kInfiniteBudget),  // x1.5 from 1.5, neighbours
  };
  Classification policy;
  policy.verdict = Verdict::kPolicyInduced;
  std::vector<const Classification*> verdicts = {nullptr, nullptr, &policy, nullptr, nullptr};
  BudgetHeadline h = HeadlineOf(trace, "DTR", 10 * f, points, 1.25, nullptr, &verdicts);
  REQUIRE(h.smallest_pass);
  CHECK(*h.smallest_pass == f + 100);
  CHECK(h.smallest_pass_exact);
  CHECK(h.floor == f);
  CHECK(h.floor_cause.find("static bound") == 0);
  REQUIRE(h.bands.size() == 2);
  CHECK(h.bands[0].lo == f);
  CHECK(h.bands[0].hi == f + 99);
  CHECK_FALSE(h.bands[0].inversion);
  CHECK(h.bands[1].lo == f + 200);
  CHECK(h.bands[1].hi == f + 260);
  CHECK(h.bands[1].inversion);
  CHECK(h.bands[1].policy_induced == 1);
  REQUIRE(h.worst_cliff);
  CHECK(h.worst_cliff->last_byte == f + 399);
  CHECK(h.worst_cliff->first_byte == f + 400);
  CHECK(h.worst_cliff->factor == doctest::Approx(1.5));

  std::vector<HeadlineItem> items = HeadlineItems(h);
  REQUIRE(items.size() == 5);
  CHECK(items[0].label == "passes from");
  CHECK(items[0].text.find("exact") != std::string::npos);
  CHECK(items[1].label == "fails below");
  CHECK(items[2].label == "fails again");
  CHECK(items[2].text.find("policy-induced (1 verdict)") != std::string::npos);
  CHECK(items[3].label == "proven floor");
  CHECK(items[4].label == "worst cliff");
  CHECK(items[4].text.find("x1.50") == 0);
}

TEST_CASE("headline: budgets not run below the smallest pass make it inexact; a jump across them is no cliff") {
  const Trace trace = Chain4();
  const int64_t f = ComputeMemoryBound(trace).bytes;
  std::vector<ScanPoint> points = {
      Point(Outcome::kOom, 0, f, f + 49),
      Point(Outcome::kPass, 3.0, f + 100, f + 199),  // f + 50 .. f + 99 not run
      Point(Outcome::kPass, 1.0, f + 300, kInfiniteBudget),  // x3, but f + 200 .. f + 299 not run
  };
  BudgetHeadline h = HeadlineOf(trace, "DTR", 10 * f, points, 1.25, nullptr, nullptr);
  REQUIRE(h.smallest_pass);
  CHECK(*h.smallest_pass == f + 100);
  CHECK_FALSE(h.smallest_pass_exact);
  CHECK(h.unknown_lo == f + 50);
  CHECK(h.unknown_hi == f + 99);
  CHECK_FALSE(h.worst_cliff);
  std::vector<HeadlineItem> items = HeadlineItems(h);
  CHECK(items[0].text.find("may pass") != std::string::npos);
  CHECK(items[1].text.find("verdicts not computed") != std::string::npos);
  CHECK(items.back().text.find("none") == 0);
}

TEST_CASE("headline: nothing passes") {
  const Trace trace = Chain4();
  const int64_t f = ComputeMemoryBound(trace).bytes;
  BudgetHeadline h = HeadlineOf(trace, "DTR", 10 * f, {Point(Outcome::kOom, 0, f, f + 10)}, 1.25, nullptr,
                                nullptr);
  CHECK_FALSE(h.smallest_pass);
  CHECK(HeadlineItems(h).front().text == "DTR passes at no budget run");
}

}  // namespace
}  // namespace dtr::testing
