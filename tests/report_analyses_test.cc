// The report's optional analyses are the CLI's own analyses, not look-alikes:
// each verdict equals what `dtrcheck explain --ratio R --no-z3` computes for
// that budget (ExplainOom with the same options, and the same printed
// lines), each divergence what `dtrcheck diff --ratios A,B` prints, and the
// atlas what `dtrcheck atlas` walks, drawn so that a hole between two grid
// points shows. Hand traces from tests/hand_traces.h, ResNet-32 where cheap.
#include <doctest/doctest.h>

#include <sstream>

#include "checker/engine/heuristic.h"
#include "diagnose/divergence.h"
#include "diagnose/oom_classification.h"
#include "diagnose/report_model.h"
#include "model/trace_parser.h"
#include "reports/html_report.h"
#include "reports/instability_report.h"
#include "reports/proof_report.h"
#include "reports/report_json.h"
#include "reports/report_text.h"
#include "tests/hand_traces.h"
#include "tests/test_paths.h"
#include "traces/demo.h"

namespace dtr::testing {
namespace {

ReportOptions AnalysesOptions(const std::string& ratios) {
  ReportOptions o;
  o.trace_name = "t.log";
  o.trace_source = "t.log";
  o.heuristic = &FindHeuristic("DTR");
  o.ratios_text = ratios;
  o.ratios = ParseRatios(ratios);
  o.jobs = 2;
  return o;
}

// What `dtrcheck explain` computes and prints for the budget of `row` (or,
// given `printed`, what it prints for that classification).
Classification ExplainByHand(const Trace& trace, const ReportModel& m, const BudgetRow& row,
                             const VerdictOptions& options, std::string* text,
                             const Classification* printed = nullptr) {
  Baseline baseline = ComputeBaseline(trace);
  ReplayConfig config;
  config.heuristic = &FindHeuristic("DTR");
  config.budget = row.run.result.budget;
  Classification c =
      printed ? *printed : ExplainOom(trace, baseline, config, ClassifyOptionsFor(options));
  ProofHeader h;
  h.log = m.trace.name;
  h.baseline = baseline;
  h.heuristic = "DTR";
  h.ratio = row.run.spec.ratio;
  h.budget = config.budget;
  std::ostringstream out;
  PrintVerdictText(out, trace, h, c, false);
  *text = out.str();
  return c;
}

// Every verdict of the report is explain's, field by field.
void CheckVerdictsAreExplains(const Trace& trace, const ReportModel& m,
                              const VerdictOptions& options) {
  REQUIRE(m.verdicts);
  size_t oom_rows = 0;
  for (const BudgetRow& r : m.rows) oom_rows += r.run.result.outcome == Outcome::kOom;
  CHECK(m.verdicts->size() == oom_rows);
  for (const BudgetVerdict& v : *m.verdicts) {
    const BudgetRow& row = m.rows[v.run];
    INFO("ratio ", row.run.spec.ratio->text);
    std::string text;
    Classification c = ExplainByHand(trace, m, row, options, &text);
    CHECK(VerdictLabel(v) == VerdictName(c.verdict));
    CHECK(v.classification.verdict == c.verdict);
    CHECK(v.classification.budget == c.budget);
    // The report's classification prints exactly what explain prints.
    std::string mine;
    ExplainByHand(trace, m, row, options, &mine, &v.classification);
    CHECK(mine == text);
    CHECK(v.command ==
          "dtrcheck explain t.log --ratio " + row.run.spec.ratio->text + ExplainFlagsFor(options));
    REQUIRE(v.classification.witness_search.witness.has_value() ==
            c.witness_search.witness.has_value());
    if (c.witness_search.witness) {
      const Witness& mine = *v.classification.witness_search.witness;
      const Witness& theirs = *c.witness_search.witness;
      CHECK(mine.source == theirs.source);
      CHECK(mine.description == theirs.description);
      CHECK(mine.script.entries.size() == theirs.script.entries.size());
      CHECK(mine.check.passed());
      CHECK(mine.check.budget == row.run.result.budget);
      CHECK(mine.check.run.max_memory == theirs.check.run.max_memory);
      REQUIRE(v.classification.certificate);
      CHECK(v.classification.certificate->Holds());
      CHECK(CertificateLine(trace, *v.classification.certificate)
                .find("schedule checker at budget " + std::to_string(row.run.result.budget) +
                      ": pass") != std::string::npos);
    }
    REQUIRE(v.classification.certificate.has_value() == c.certificate.has_value());
    if (c.certificate) CHECK(v.classification.certificate->kind == c.certificate->kind);
    if (c.verdict == Verdict::kUndetermined) CHECK_FALSE(v.classification.certificate);
  }
}

TEST_CASE("report verdicts: the explain command of a verdict names each option not at its default") {
  CHECK(ExplainFlagsFor({}) == " --no-z3");
  VerdictOptions v{.z3 = true};
  CHECK(ExplainFlagsFor(v).empty());
  v.work_limit = 5000;
  CHECK(ExplainFlagsFor(v) == " --work-limit 5000");
  v.timeout_seconds = 2.5;
  v.cut = false;
  CHECK(ExplainFlagsFor(v) == " --timeout 2.5 --work-limit 5000 --no-cut");
  // And the classification is asked with those limits.
  const ClassifyOptions o = ClassifyOptionsFor(v);
  CHECK(o.witness.limits.work_limit == 5000);
  CHECK(o.witness.limits.timeout_seconds == 2.5);
  CHECK(o.witness.use_z3);
  CHECK_FALSE(o.cut);
}

TEST_CASE("report verdicts on a hand trace are explain's: inherent and policy-induced") {
  // Blame6 (tests/hand_traces.h), baseline memory 40: at ratio 0.775 (budget
  // 31) DTR runs out of memory but evicting q at decision 0 passes, so the
  // OOM is the policy's; at ratio 0.25 (budget 10) computing y needs its
  // three 10-byte arguments and its 1-byte output, 31 bytes, whatever is
  // evicted: inherent by the static bound (31 > 10).
  Trace trace = Blame6();
  ReportOptions o = AnalysesOptions("0.25,0.775,1.0");
  ReportModel m = BuildReport(trace, o);
  REQUIRE(m.rows.size() == 3);
  CHECK(m.rows[0].run.result.budget == 10);
  CHECK(m.rows[1].run.result.budget == 31);
  CheckVerdictsAreExplains(trace, m, o.verdict_options);
  const BudgetVerdict* low = VerdictOf(m, 0);
  const BudgetVerdict* mid = VerdictOf(m, 1);
  REQUIRE(low);
  REQUIRE(mid);
  CHECK(VerdictLabel(*low) == "inherent");
  REQUIRE(low->classification.certificate);
  CHECK(low->classification.certificate->Holds());
  CHECK(CertificateLine(trace, *low->classification.certificate)
            .rfind("certificate: static bound 31 bytes > budget: g/", 0) == 0);
  CHECK(VerdictLabel(*mid) == "policy-induced");
  CHECK(mid->classification.witness_search.witness->source == "counterfactual");
  CHECK(VerdictOf(m, 2) == nullptr);  // passes

  nlohmann::json j = nlohmann::json::parse(ReportJson(trace, m).dump())["heuristics"][0];
  CHECK(j["verdicts"][0]["certificate"]["type"] == "static-bound");
  CHECK(j["verdicts"][0]["certificate"]["checked_by"] == "memory-bound");
  CHECK(j["verdicts"][0]["certificate"]["checked"] == true);
  CHECK(j["verdicts"][0]["static_bound"]["bytes"] == 31);
  CHECK(j["verdicts"][1]["certificate"]["type"] == "script");
  CHECK(j["verdicts"][1]["certificate"]["check"]["result"] == "pass");
  CHECK(j["verdicts"][1]["certificate"]["check"]["budget"] == 31);
  // The same certificate objects as `dtrcheck explain --json` writes.
  for (size_t k : {0, 1}) {
    ProofHeader h;
    h.log = "t.log";
    h.baseline = m.trace.baseline;
    nlohmann::json e = nlohmann::json::parse(
        ClassificationJson(trace, h, "explain", (*m.verdicts)[k].classification).dump());
    CHECK(e["certificate"] == j["verdicts"][k]["certificate"]);
    CHECK(e["static_bound"] == j["verdicts"][k]["static_bound"]);
  }

  // A cap on the verdicts' cost: 40 replays at each OOM run's evaluations
  // and steps, in VerdictRows' order (the highest OOM row of the stretch
  // first); the first verdict is always made.
  const int64_t cost_mid = VerdictCost(m, m.rows[1]);
  const int64_t cost_low = VerdictCost(m, m.rows[0]);
  CHECK(cost_low ==
        kReplaysPerVerdict * (m.rows[0].run.result.heuristic_evals + m.trace.program_steps));
  REQUIRE(cost_low > 0);
  for (auto [cap, verdicts] :
       {std::pair<int64_t, size_t>{1, 1}, {cost_mid + cost_low - 1, 1}, {cost_mid + cost_low, 2}}) {
    INFO("verdict_evals ", cap);
    o.verdict_evals = cap;
    ReportModel capped = BuildReport(trace, o);
    REQUIRE(capped.verdicts);
    CHECK(capped.verdicts->size() == verdicts);
    CHECK(capped.verdicts_capped == 2 - verdicts);
    CHECK(VerdictOf(capped, 1) != nullptr);
  }
}

TEST_CASE("report verdicts on ResNet-32 are explain's at 0.093, 0.102 and 0.104") {
  // 0.102 and 0.104 are inside the feasibility inversion: the run at a lower
  // budget is a script the schedule checker passes there. 0.093 is below the
  // first feasible budget: without Z3 nothing settles it.
  Trace trace = LoadTrace(TracePath("resnet32"));
  ReportOptions o = AnalysesOptions("0.093,0.101,0.102,0.104");
  o.atlas = false;
  o.divergence = false;
  ReportModel m = BuildReport(trace, o);
  CheckVerdictsAreExplains(trace, m, o.verdict_options);
  REQUIRE(m.verdicts->size() == 3);
  CHECK(VerdictLabel((*m.verdicts)[0]) == "undetermined");
  for (size_t k : {1, 2}) {
    const BudgetVerdict& v = (*m.verdicts)[k];
    CHECK(VerdictLabel(v) == "policy-induced");
    CHECK(v.classification.witness_search.witness->source == "lower-budget run");
  }
}

TEST_CASE("report divergences are diff's, at the inversion's edges") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  ReportOptions o = AnalysesOptions(DemoRatios());
  o.atlas = false;
  o.verdicts = false;
  ReportModel m = BuildReport(trace, o);
  REQUIRE(m.divergence);
  Baseline baseline = ComputeBaseline(trace);
  bool lower_edge = false, upper_edge = false;
  for (const RegimeDivergence& d : *m.divergence) {
    INFO("runs ", d.run_a, " / ", d.run_b);
    CHECK(d.run_b == d.run_a + 1);
    CHECK(m.rows[d.run_a].regime != m.rows[d.run_b].regime);
    const RunRecord& a = m.rows[d.run_a].run;
    const RunRecord& b = m.rows[d.run_b].run;
    RunComparison by_hand = CompareRuns(trace, baseline, a.spec, b.spec);
    std::ostringstream text;
    PrintDiffText(text, TraceSummary{"t.log", baseline}, trace, by_hand);
    CHECK(DiffText(trace, m, d) == text.str());
    CHECK(d.comparison.first.index == by_hand.first.index);
    CHECK(d.command ==
          "dtrcheck diff t.log --ratios " + a.spec.ratio->text + "," + b.spec.ratio->text);
    if (d.edge == RegimeEdge::kInversionLowerEdge) {
      lower_edge = true;
      CHECK(a.result.outcome == Outcome::kPass);
      CHECK(m.rows[d.run_b].inversion);
    }
    if (d.edge == RegimeEdge::kInversionUpperEdge) {
      upper_edge = true;
      CHECK(m.rows[d.run_a].inversion);
      CHECK(b.result.outcome == Outcome::kPass);
    }
  }
  CHECK(lower_edge);
  CHECK(upper_edge);
  // Neighbours in one regime are not compared.
  size_t changes = 0;
  for (size_t i = 0; i + 1 < m.rows.size(); ++i)
    changes += m.rows[i].regime != m.rows[i + 1].regime;
  CHECK(m.divergence->size() == changes);
}

TEST_CASE("report atlas: a hole between two grid points appears, exact in bytes") {
  // The demo passes at ratios 0.49 and 0.55 and fails at every budget of
  // [5767168, 6291455] between them (docs/demo.md). A grid of just
  // those two points sees no OOM; the atlas over their range finds the hole.
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  ReportOptions o = AnalysesOptions("0.49,0.55");
  o.verdicts = false;
  o.divergence = false;
  o.refine = false;
  ReportModel m = BuildReport(trace, o);
  REQUIRE(m.rows.size() == 2);
  for (const BudgetRow& r : m.rows) REQUIRE(r.run.result.outcome == Outcome::kPass);
  REQUIRE(m.atlas);
  REQUIRE(m.atlas->complete());
  const BudgetAtlas& a = m.atlas->sections[0];
  CHECK(a.lo == m.rows.front().run.result.budget);
  CHECK(a.hi == m.rows.back().run.result.budget);
  REQUIRE(a.summary.holes.size() == 1);
  CHECK(a.summary.holes[0].lo == 5767168);
  CHECK(a.summary.holes[0].hi == 6291455);
  CHECK(m.atlas->Infeasible() == std::vector<std::pair<int64_t, int64_t>>{{5767168, 6291455}});
  // The same intervals as `dtrcheck atlas` walks over the range.
  RunSpec spec;
  spec.heuristic = o.heuristic;
  BudgetAtlas direct = BuildAtlas(trace, ComputeBaseline(trace), spec, a.lo, a.hi, 1);
  REQUIRE(direct.intervals.size() == a.intervals.size());
  for (size_t i = 0; i < a.intervals.size(); ++i) {
    CHECK(direct.intervals[i].lo == a.intervals[i].lo);
    CHECK(direct.intervals[i].hi == a.intervals[i].hi);
    CHECK(direct.intervals[i].behaviour.outcome == a.intervals[i].behaviour.outcome);
  }
  // Replays inside the hole agree with it.
  for (int64_t b : {int64_t{5767168}, int64_t{6000000}, int64_t{6291455}}) {
    RunSpec s;
    s.heuristic = o.heuristic;
    s.budget = b;
    CHECK(RunOne(trace, ComputeBaseline(trace), s).result.outcome == Outcome::kOom);
  }
  // The hole is a feasibility inversion the grid missed, as `scan --exact` names it.
  REQUIRE(m.curve.exact_inversions);
  REQUIRE(m.curve.exact_inversions->size() == 1);
  CHECK((*m.curve.exact_inversions)[0].where.first_oom_byte == 5767168);
  CHECK((*m.curve.exact_inversions)[0].where.last_oom_byte == 6291455);
  CHECK((*m.curve.exact_inversions)[0].where.missed_by_grid());
  std::ostringstream html;
  WriteHtmlReport(html, trace, m);
  CHECK(html.str().find("class=\"band-exact\"") != std::string::npos);
  CHECK(html.str().find("[5,767,168, 6,291,455]") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(ReportJson(trace, m).dump())["heuristics"][0];
  CHECK(j["curve"]["exact_inversions"][0]["oom_width"] == 524288);
  CHECK(j["curve"]["exact_inversions"][0]["missed_by_grid"] == true);
  CHECK(j["atlas"]["complete"] == true);
  CHECK(j["atlas"]["intervals"].size() == a.intervals.size());

  SUBCASE("refined, the report adds rows inside the hole the grid stepped over") {
    o.refine = true;
    ReportModel refined = BuildReport(trace, o);
    size_t added = 0, added_oom = 0;
    for (const BudgetRow& r : refined.rows) {
      if (r.source == RowSource::kGrid) continue;
      ++added;
      const int64_t b = r.run.result.budget;
      const bool inside = 5767168 <= b && b <= 6291455;
      CHECK((r.run.result.outcome == Outcome::kOom) == inside);
      added_oom += inside;
    }
    CHECK(added >= 3);
    CHECK(added_oom >= 1);
    // Printed one line per hole or cliff, every added row named once.
    std::vector<std::string> lines = AddedRowLines(refined);
    CHECK(lines.size() < added);
    std::string all;
    for (const std::string& l : lines) all += l + "\n";
    for (const BudgetRow& r : refined.rows)
      if (r.source != RowSource::kGrid) CHECK(all.find(RowLabel(r)) != std::string::npos);
    CHECK(all.find("zoom grid over the OOM budgets [5767168, 6291455]") != std::string::npos);
    // Now the rows themselves show the inversion.
    REQUIRE(refined.curve.analysis.inversions.size() == 1);
    CHECK_FALSE((*refined.curve.exact_inversions)[0].where.missed_by_grid());
  }

  SUBCASE("over its budget of replays, the atlas says how far it got") {
    o.atlas_cap = {.runs = 2};
    ReportModel capped = BuildReport(trace, o);
    REQUIRE(capped.atlas);
    CHECK(capped.atlas->budget_ran_out);
    CHECK(capped.atlas->replays == 2);
    CHECK_FALSE(capped.atlas->complete());
    CHECK(capped.atlas->covered() > 0);
    CHECK(capped.atlas->covered() < capped.atlas->hi - capped.atlas->lo + 1);
    std::vector<std::string> f = AtlasFindings(capped);
    REQUIRE_FALSE(f.empty());
    CHECK(f[0].rfind("The atlas reached its cap of 2 replays (--atlas-max-runs) after 2 replays: "
                     "it covered ",
                     0) == 0);
    CHECK(f[0].find("Not walked, known only at the rows: ") != std::string::npos);
    nlohmann::json jc = nlohmann::json::parse(ReportJson(trace, capped).dump())["heuristics"][0];
    CHECK(jc["atlas"]["complete"] == false);
    CHECK(jc["atlas"]["budget_ran_out"] == true);
    CHECK(jc["atlas"]["intervals"].size() == 2);
    CHECK(jc["atlas"]["gaps"].size() >= 1);
  }
}

}  // namespace
}  // namespace dtr::testing
