// Regression: `dtrcheck scan` and `dtrcheck report` disagreed about the
// shape of the same budget curve (issue 10). The report recomputed it:
// a cliff was a factor `>=` the cliff factor (the scan: `>`), an OOM row was
// an "inversion" as soon as any budget below it passed (the scan: a maximal
// OOM stretch with a pass right below and right above it), and the HTML
// headline card counted a third kind (OOM bands with a pass somewhere below
// and somewhere above). On ResNet-32 at ratios 0.099..0.104 the report
// flagged 0.102-0.104 as inversions, the scan found none.
//
// Now both call AnalyzeScan (diagnose/budget_curve.h) and render it with the
// same writer. These tests build curves where the old definitions disagreed
// and check that both outputs name the same inversions and cliffs.
#include <doctest/doctest.h>

#include <sstream>

#include "checker/engine/heuristic.h"
#include "diagnose/instability_scan.h"
#include "diagnose/report_model.h"
#include "model/trace_parser.h"
#include "reports/html_report.h"
#include "reports/instability_report.h"
#include "reports/markdown_report.h"
#include "reports/report_json.h"
#include "tests/hand_traces.h"
#include "tests/test_paths.h"
#include "traces/demo.h"

namespace dtr::testing {
namespace {

using nlohmann::json;

// A grid row at ratio r (budget 1000 * r) whose run covers [lo, hi].
BudgetRow Row(const char* ratio, Outcome outcome, double overhead, int64_t lo, int64_t hi) {
  BudgetRow r;
  r.run.spec.ratio = ParseRatio(ratio);
  r.run.result.outcome = outcome;
  r.run.result.budget = static_cast<int64_t>(1000 * r.run.spec.ratio->value);
  r.run.result.budget_lo = lo;
  r.run.result.budget_hi = hi;
  r.run.result.heuristic_evictions = 10;
  r.run.result.distinct_evicted = 5;
  r.run.overhead = overhead;
  return r;
}

// The curve of the bug: every place where an old definition said something
// else than the scan's.
std::vector<BudgetRow> DisputedCurve() {
  const Outcome P = Outcome::kPass, O = Outcome::kOom, T = Outcome::kThrash;
  return {
      Row("0.10", P, 1.0, 100, 109),
      Row("0.11", P, 1.25, 110, 119),  // factor exactly 1.25: the old report's cliff, not one
      Row("0.12", O, 0.5, 120, 129),   // pass right below and right above: the one inversion
      Row("0.13", P, 1.25, 130, 139),
      Row("0.14", O, 0.5, 140, 149),  // pass below, thrash above: old report row "inversion"
      Row("0.15", T, 3.0, 150, 159),
      Row("0.16", P, 1.3, 160, 169),  // (the old headline card counted 0.14 with this pass)
      Row("0.17", P, 2.0, 170, 179),  // 2.0 / 1.3 > 1.25: the one cliff
      Row("0.18", O, 0.5, 180, 189),  // OOM at the top: old report row "inversion"
  };
}

// The report model of rows without replays (no timeline, atlas or analyses).
ReportModel ModelOf(std::vector<BudgetRow> rows, double cliff_factor) {
  ReportModel m;
  m.trace.name = "curve";
  m.trace.baseline.memory = 1000;
  m.trace.baseline.compute = 1;
  m.heuristic = "DTR";
  m.runtime = "RuntimeV2EagerOptimized";
  m.cliff_factor = cliff_factor;
  m.rows = std::move(rows);
  m.curve = AnalyzeCurve(m.rows, cliff_factor);
  m.frontiers.emplace();
  return m;
}

ScanResult ScanOf(const std::vector<BudgetRow>& rows, double cliff_factor) {
  ScanResult s;
  s.heuristic = &FindHeuristic("DTR");
  s.cliff_factor = cliff_factor;
  for (const BudgetRow& r : rows) s.points.push_back(MakeScanPoint(r.run));
  s.analysis = AnalyzeScan(s.points, cliff_factor);
  return s;
}

// Both JSON outputs name the same regimes, cliffs and inversions, key by key.
void CheckSameNames(const json& report, const json& scan) {
  for (const char* key : {"regimes", "cliffs", "inversions"}) {
    INFO(key);
    CHECK(report["curve"][key] == scan[key]);
  }
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST_CASE("scan and report name the same inversions and cliffs on the disputed curve") {
  const double factor = 1.25;
  ReportModel m = ModelOf(DisputedCurve(), factor);
  ScanResult scan = ScanOf(m.rows, factor);

  // One inversion (0.11 | 0.12 | 0.13) and one cliff (0.16 -> 0.17), in both.
  for (const ScanAnalysis* a : {&m.curve.analysis, &scan.analysis}) {
    REQUIRE(a->inversions.size() == 1);
    CHECK(a->inversions[0].feasible_below == 1);
    CHECK(a->inversions[0].oom_from == 2);
    CHECK(a->inversions[0].oom_to == 2);
    CHECK(a->inversions[0].feasible_above == 3);
    REQUIRE(a->cliffs.size() == 1);
    CHECK(a->cliffs[0].lower == 6);
    CHECK(a->cliffs[0].upper == 7);
  }
  for (size_t i = 0; i < m.rows.size(); ++i) {
    INFO("row ", i);
    CHECK(m.rows[i].inversion.has_value() == (i == 2));
    CHECK(m.rows[i].regime == scan.points[i].regime);
  }
  // The touching intervals make the inversion's edges and the cliff exact in both.
  REQUIRE(scan.analysis.inversions[0].lower_edge);
  CHECK(scan.analysis.inversions[0].lower_edge->last_byte == 119);
  REQUIRE(scan.analysis.cliffs[0].boundary);
  CHECK(scan.analysis.cliffs[0].boundary->first_byte == 170);

  Trace trace = Remat4();
  json report = json::parse(ReportJson(trace, m).dump())["heuristics"][0];
  json scanned = json::parse(ScanJson(TraceSummary{"curve", m.trace.baseline}, scan).dump());
  CheckSameNames(report, scanned);
  CHECK(report["curve"]["inversions"][0]["oom_from"].get<double>() == 0.12);
  CHECK(report["curve"]["cliffs"][0]["below"].get<double>() == 0.16);
  CHECK(report["runs"][4]["inversion"].is_null());
  CHECK(report["runs"][8]["inversion"].is_null());
  CHECK(report["runs"][2]["inversion"] == 0);
  // Three OOM stretches; only the middle one of 0.12 is an inversion.
  REQUIRE(report["curve"]["oom_bands"].size() == 3);
  CHECK(report["curve"]["oom_bands"][0]["inversion"] == 0);
  CHECK(report["curve"]["oom_bands"][1]["inversion"].is_null());
  CHECK(report["curve"]["oom_bands"][2]["inversion"].is_null());

  // The renderers show what the model holds: one inversion and one cliff.
  std::ostringstream html, md, text;
  WriteHtmlReport(html, trace, m);
  WriteMarkdownReport(md, trace, m);
  PrintScanText(text, TraceSummary{"curve", m.trace.baseline}, scan);
  CHECK(html.str().find("feasibility inversions</div><div class=\"v\">1</div>") !=
        std::string::npos);
  CHECK(html.str().find("cliffs</div><div class=\"v\">1</div>") != std::string::npos);
  CHECK(Count(html.str(), "<tr class=\"inversion") == 1);
  CHECK(Count(html.str(), "inversion</text>") == 1);
  CHECK(Count(md.str(), "(inversion)") == 1);
  CHECK(Count(md.str(), "Feasibility inversion:") == 1);
  CHECK(Count(md.str(), "Cliff:") == 1);
  CHECK(text.str().find("feasibility inversions (OOM budgets between feasible ones): 1") !=
        std::string::npos);
  CHECK(text.str().find("overhead differs by more than 1.25x): 1") != std::string::npos);
}

ReportOptions Options(const std::string& ratios, double factor) {
  ReportOptions o;
  o.trace_name = "t.log";
  o.trace_source = "t.log";
  o.heuristic = &FindHeuristic("DTR");
  o.ratios_text = ratios;
  o.ratios = ParseRatios(ratios);
  o.cliff_factor = factor;
  o.jobs = 2;
  o.verdicts = false;
  o.divergence = false;
  return o;
}

TEST_CASE("scan and report agree on ResNet-32: an OOM at the top of the grid is no inversion") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  Baseline baseline = ComputeBaseline(trace);
  ScanOptions so;
  so.heuristic = &FindHeuristic("DTR");
  so.cliff_factor = 1.25;
  so.jobs = 2;
  for (const char* ratios : {"0.099,0.100,0.101,0.102,0.103,0.104", "0.100,0.101,0.102,0.107"}) {
    INFO(ratios);
    ReportOptions o = Options(ratios, 1.25);
    o.atlas = false;
    ReportModel m = BuildReport(trace, o);
    ScanResult scan = ScanInstability(trace, baseline, ParseRatios(ratios), so);
    json report = json::parse(ReportJson(trace, m).dump())["heuristics"][0];
    json scanned = json::parse(ScanJson(TraceSummary{"t", baseline}, scan).dump());
    CheckSameNames(report, scanned);
    size_t inversion_rows = 0;
    for (const BudgetRow& r : m.rows) inversion_rows += r.inversion.has_value();
    if (std::string(ratios).find("0.107") == std::string::npos) {
      CHECK(scanned["inversions"].empty());  // 0.102-0.104 OOM, nothing passes above
      CHECK(inversion_rows == 0);
    } else {
      CHECK(scanned["inversions"].size() == 1);
      CHECK(inversion_rows == 1);  // 0.102
    }
  }
}

TEST_CASE("report with its atlas names what scan --exact names on the demo") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  Baseline baseline = ComputeBaseline(trace);
  const std::string ratios = DemoRatios();
  ReportOptions o = Options(ratios, 1.25);
  o.refine = false;  // the same rows as the scan's grid
  ReportModel m = BuildReport(trace, o);
  REQUIRE(m.atlas);
  REQUIRE(m.atlas->complete());
  ScanOptions so;
  so.heuristic = &FindHeuristic("DTR");
  so.cliff_factor = 1.25;
  so.exact = true;
  so.jobs = 2;
  ScanResult scan = ScanInstability(trace, baseline, ParseRatios(ratios), so);
  json report = json::parse(ReportJson(trace, m).dump())["heuristics"][0];
  json scanned = json::parse(ScanJson(TraceSummary{"demo", baseline}, scan).dump());
  // Grid points read off the atlas and grid points replayed are the same
  // runs, so everything matches, boundaries from the atlas included.
  CheckSameNames(report, scanned);
  CHECK_FALSE(scanned["inversions"].empty());
  // The report's inversions also name their atlas section (one here).
  json exact = report["curve"]["exact_inversions"];
  for (json& v : exact) {
    CHECK(v["section"] == 0);
    v.erase("section");
  }
  CHECK(exact == scanned["exact_inversions"]);
}

}  // namespace
}  // namespace dtr::testing
