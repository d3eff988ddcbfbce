// The budget report: the curve analysis on hand-made rows, the model built
// from the demo and ResNet-32 (with invariants tying the frontier to the
// engine's OOM context), the JSON checked against the schema table of
// docs/report_json.md, and the self-containment of the HTML.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "checker/engine/heuristic.h"
#include "diagnose/memory_timeline.h"
#include "diagnose/report_model.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "reports/html_report.h"
#include "reports/markdown_report.h"
#include "reports/report_figures.h"
#include "reports/report_files.h"
#include "reports/report_json.h"
#include "reports/report_text.h"
#include "reports/svg_plot.h"
#include "tests/test_paths.h"
#include "tests/test_runs.h"
#include "traces/demo.h"

namespace dtr::testing {
namespace {

using nlohmann::json;

BudgetRow Row(Outcome o, double overhead, int64_t lo, int64_t hi) {
  BudgetRow r;
  r.run.result.outcome = o;
  r.run.result.budget = lo;
  r.run.result.budget_lo = lo;
  r.run.result.budget_hi = hi;
  r.run.overhead = overhead;
  return r;
}

TEST_CASE("AnalyzeCurve: OOM bands, inversions, exact edges and cliffs") {
  std::vector<BudgetRow> rows = {
      Row(Outcome::kOom, 0.2, 0, 99),                  // 0: below everything
      Row(Outcome::kPass, 2.0, 100, 199),              // 1
      Row(Outcome::kOom, 0.5, 200, 249),               // 2: inversion, edge exact below
      Row(Outcome::kOom, 0.5, 250, 260),               // 3: merges with 2
      Row(Outcome::kOom, 0.6, 280, 290),               // 4: a gap before it
      Row(Outcome::kPass, 1.5, 300, 399),              // 5: not exact above (291..299 unknown)
      Row(Outcome::kPass, 1.1, 400, 499),              // 6: cliff 1.5 / 1.1 = 1.36
      Row(Outcome::kPass, 1.0, 500, kInfiniteBudget),  // 7: 1.1, no cliff at 1.25
  };
  CurveShape c = AnalyzeCurve(rows, 1.25);
  REQUIRE(c.oom_stretches.size() == 2);
  CHECK(c.oom_stretches[0].from == 0);
  CHECK_FALSE(c.oom_stretches[0].inversion);  // nothing passes below it
  CHECK(c.oom_stretches[0].exact_upper_edge);  // 99 + 1 == 100
  const OomStretch& inv = c.oom_stretches[1];
  CHECK(inv.from == 2);
  CHECK(inv.to == 4);
  CHECK(inv.known_oom == std::vector<std::pair<int64_t, int64_t>>{{200, 260}, {280, 290}});
  CHECK(inv.inversion == size_t{0});
  CHECK(inv.exact_lower_edge);
  CHECK_FALSE(inv.exact_upper_edge);
  REQUIRE(c.analysis.inversions.size() == 1);
  const ScanInversion& v = c.analysis.inversions[0];
  CHECK(v.feasible_below == 1);
  CHECK(v.oom_from == 2);
  CHECK(v.oom_to == 4);
  CHECK(v.feasible_above == 5);
  // The exact lower edge is the inversion's boundary, known from the runs alone.
  REQUIRE(v.lower_edge);
  CHECK(v.lower_edge->last_byte == 199);
  CHECK(v.lower_edge->first_byte == 200);
  CHECK(v.lower_edge->sharp());
  CHECK(v.lower_edge->replays == 0);
  CHECK_FALSE(v.upper_edge);
  CHECK_FALSE(rows[0].inversion);
  CHECK(rows[2].inversion == size_t{0});
  CHECK(rows[3].inversion == size_t{0});
  CHECK(rows[4].inversion == size_t{0});
  CHECK_FALSE(rows[5].inversion);
  REQUIRE(c.analysis.cliffs.size() == 1);
  CHECK(c.analysis.cliffs[0].lower == 5);
  CHECK(c.analysis.cliffs[0].upper == 6);
  CHECK(c.analysis.cliffs[0].factor == doctest::Approx(1.5 / 1.1));
  // Regimes are the scan's, row by row.
  for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i].regime == c.points[i].regime);
}

ReportOptions Options(const std::string& ratios) {
  ReportOptions o;
  o.trace_name = "test";
  o.trace_source = "test";
  o.heuristic = &FindHeuristic("DTR");
  o.ratios_text = ratios;
  o.ratios = ParseRatios(ratios);
  o.jobs = 1;
  return o;
}

// What must hold for every report: rows by budget, frontiers consistent with
// the engine's own OOM context.
void CheckModelInvariants(const ReportModel& m) {
  for (size_t i = 1; i < m.rows.size(); ++i)
    CHECK(m.rows[i - 1].run.result.budget <= m.rows[i].run.result.budget);
  REQUIRE(m.frontiers);
  size_t oom_rows = 0, in_frontiers = 0;
  for (const BudgetRow& r : m.rows) oom_rows += r.run.result.outcome == Outcome::kOom;
  for (const OomFrontier& f : *m.frontiers) {
    in_frontiers += f.runs.size();
    const OomContext& oom = *m.rows[f.runs.front()].run.result.oom;
    const RematFrontier& r = f.frontier;
    CHECK(r.frames.size() == static_cast<size_t>(oom.remat_depth) + 1);
    CHECK(r.pinned_bytes == oom.pinned_memory);
    int64_t frame_locked = 0;
    for (const FrontierFrame& fr : r.frames) frame_locked += fr.new_locked_bytes;
    CHECK(frame_locked == oom.locked_memory);
    int64_t locked_args = 0;
    for (const FrontierFrame& fr : r.frames)
      for (const FrontierArg& a : fr.args) locked_args += a.state == ArgState::kLocked ? 1 : 0;
    CHECK(locked_args == oom.locked_storages);
    for (size_t i : f.runs) CHECK(m.rows[i].run.result.outcome == Outcome::kOom);
  }
  CHECK(in_frontiers == oom_rows);
}

TEST_CASE(
    "report model of the demo: the timelines around the inversion, frontiers match the engine") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  ReportModel m = BuildReport(trace, Options(DemoRatios()));
  CheckModelInvariants(m);
  REQUIRE_FALSE(m.curve.analysis.inversions.empty());
  // The last pass below the first inversion and its first OOM, overlaid.
  REQUIRE(m.timelines.size() == 2);
  const ScanInversion& inv = m.curve.analysis.inversions.front();
  CHECK(m.timelines[0].run == inv.feasible_below);
  CHECK(m.timelines[1].run == inv.oom_from);
  CHECK(m.timelines[0].outcome == Outcome::kPass);
  CHECK(m.timelines[1].outcome == Outcome::kOom);
  for (const MemoryTimeline& t : m.timelines) {
    const RunResult& row = m.rows[t.run].run.result;
    CHECK(t.budget == row.budget);
    CHECK(t.events == row.events);
    CHECK_FALSE(t.reduced);
    CHECK_FALSE(t.marks_reduced);
    CHECK(static_cast<int64_t>(t.points.size()) == t.events);
    CHECK(t.program_steps == static_cast<int32_t>(trace.program.size()));
    for (const TimelinePoint& p : t.points) CHECK(p.memory <= t.budget);
    // Every eviction and rematerialization is marked, as the engine counts them.
    int64_t heuristic = 0, eager = 0;
    for (const TimelineEviction& e : t.evictions) (e.heuristic ? heuristic : eager) += 1;
    CHECK(heuristic == row.heuristic_evictions);
    CHECK(eager == row.eager_evictions);
    CHECK(t.heuristic_evictions == row.heuristic_evictions);
    CHECK(static_cast<int64_t>(t.remats.size()) == t.remat_events);
    int64_t remat_points = 0;
    for (const TimelinePoint& p : t.points) remat_points += p.remat;
    CHECK(remat_points == t.remat_events);
  }
  const MemoryTimeline& t = m.timelines[1];
  REQUIRE(t.oom);
  CHECK(t.oom->event == t.events);
  CHECK(t.oom->memory_usage + t.oom->request > t.budget);
  // One verdict per OOM row; the optional analyses all ran.
  REQUIRE(m.verdicts);
  size_t oom_rows = 0;
  for (const BudgetRow& r : m.rows) oom_rows += r.run.result.outcome == Outcome::kOom;
  CHECK(m.verdicts->size() == oom_rows);
  REQUIRE(m.divergence);
  CHECK_FALSE(m.divergence->empty());
  // The two timeline runs are a divergence pair: where they part ways is named.
  REQUIRE(m.timeline_divergence);
  REQUIRE(m.atlas);
  CHECK(m.atlas->complete());
  CHECK_FALSE(m.atlas->budget_ran_out);

  SUBCASE("a reduced timeline keeps the extremes") {
    ReportOptions o = Options(DemoRatios());
    o.max_timeline_points = 10;
    ReportModel small = BuildReport(trace, o);
    REQUIRE(small.timelines.size() == 2);
    CHECK(small.timelines[1].reduced);
    CHECK(small.timelines[1].points.size() <= 10);
    int64_t peak = 0, reduced_peak = 0;
    for (const TimelinePoint& p : t.points) peak = std::max(peak, p.memory);
    for (const TimelinePoint& p : small.timelines[1].points)
      reduced_peak = std::max(reduced_peak, p.memory);
    CHECK(reduced_peak == peak);
  }
  SUBCASE("--timeline-ratio must be on the grid, and draws that run alone") {
    ReportOptions o = Options("0.5,0.6");
    o.timeline_ratio = ParseRatio("0.55");
    CHECK_THROWS_WITH_AS(BuildReport(trace, o),
                         "report: --timeline-ratio 0.55 is not on the grid 0.5,0.6", Error);
    o.timeline_ratio = ParseRatio("0.6");
    o.atlas = false;
    ReportModel one = BuildReport(trace, o);
    REQUIRE(one.timelines.size() == 1);
    CHECK(one.timelines[0].run == 1);
  }
}

TEST_CASE(
    "report model of ResNet-32: the deep OOM frontiers add up to the engine's locked memory") {
  Trace trace = LoadTrace(TracePath("resnet32"));
  ReportOptions o = Options("0.093,0.098,0.102,0.107");
  o.atlas = false;  // hundreds of replays over this range; the demo tests the atlas
  o.verdicts = false;
  o.divergence = false;
  ReportModel m = BuildReport(trace, o);
  CheckModelInvariants(m);
  REQUIRE(m.curve.analysis.inversions.size() == 1);
  CHECK(m.curve.analysis.inversions[0].oom_from == 2);
  CHECK(m.curve.analysis.inversions[0].oom_to == 2);
  CHECK(m.frontiers->size() == 2);
}

// The schema table of docs/report_json.md: path -> allowed JSON types; the
// paths whose type column says they appear "only" in some cases; and the
// paths documented by reference ("see `docs/X.md`"), with those documents.
struct DocumentedSchema {
  std::map<std::string, std::set<std::string>> types;
  std::set<std::string> conditional;
  std::map<std::string, std::vector<std::string>> by_reference;
};

DocumentedSchema ReadDocumentedSchema() {
  std::ifstream in(std::string(DTRCHECK_SOURCE_DIR) + "/docs/report_json.md");
  REQUIRE(in);
  DocumentedSchema schema;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    size_t a = 3, b = line.find('`', a);
    std::string path = line.substr(a, b - a);
    size_t c = line.find('|', b) + 1, d = line.find('|', c);
    std::string types = line.substr(c, d - c);
    if (types.find("only") != std::string::npos) schema.conditional.insert(path);
    for (size_t p = types.find("`docs/"); p != std::string::npos; p = types.find("`docs/", p + 1))
      schema.by_reference[path].push_back(types.substr(p + 1, types.find('`', p + 1) - p - 1));
    std::set<std::string> allowed;
    for (const char* t : {"integer", "number", "string", "boolean", "array", "object", "null"})
      if (types.find(t) != std::string::npos) allowed.insert(t);
    schema.types[path] = allowed;
  }
  return schema;
}

// The documents that cover `path` by reference (those of its nearest
// documented ancestor that has some), or none.
std::vector<std::string> ReferencesFor(const DocumentedSchema& schema, std::string path) {
  while (true) {
    size_t cut = path.find_last_of(".[");
    if (cut == std::string::npos) return {};
    path = path.substr(0, cut);
    auto it = schema.by_reference.find(path);
    if (it != schema.by_reference.end()) return it->second;
    if (schema.types.count(path)) return {};
  }
}

// Whether `key` is named in one of `docs` (as `key` or "key").
bool NamedIn(const std::vector<std::string>& docs, const std::string& key) {
  for (const std::string& doc : docs) {
    std::ifstream in(std::string(DTRCHECK_SOURCE_DIR) + "/" + doc);
    REQUIRE_MESSAGE(in, "cannot read ", doc);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("`" + key + "`") != std::string::npos ||
        text.find("\"" + key + "\"") != std::string::npos)
      return true;
  }
  return false;
}

std::string TypeOf(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

// Visits every object field (descending into arrays of objects as "path[]").
void CollectPaths(const json& v, const std::string& path,
                  std::map<std::string, std::vector<const json*>>& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string p = path.empty() ? it.key() : path + "." + it.key();
      out[p].push_back(&it.value());
      CollectPaths(it.value(), p, out);
    }
  } else if (v.is_array()) {
    for (const json& e : v)
      if (e.is_object()) CollectPaths(e, path + "[]", out);
  }
}

// A run too long to keep whole is replayed twice, the second time keeping
// only what the timeline shows: the same timeline as reducing everything.
// The timeline's reduction, defined on a whole run: the lowest and the
// highest point of each of `buckets` ranges of point indices (first of equals,
// in run order), and the first mark of each of `buckets` event ranges over
// [0, events]. RecordTimeline reduces as the run goes; these say what it must
// keep.
std::vector<TimelinePoint> ReducePoints(const std::vector<TimelinePoint>& points, size_t buckets) {
  std::vector<TimelinePoint> out;
  const size_t n = points.size();
  for (size_t b = 0; b < buckets; ++b) {
    const size_t begin = n * b / buckets, end = n * (b + 1) / buckets;
    if (begin == end) continue;
    size_t lo = begin, hi = begin;
    for (size_t i = begin; i < end; ++i) {
      if (points[i].memory < points[lo].memory) lo = i;
      if (points[i].memory > points[hi].memory) hi = i;
    }
    out.push_back(points[std::min(lo, hi)]);
    if (lo != hi) out.push_back(points[std::max(lo, hi)]);
  }
  return out;
}
template <typename Mark>
std::vector<Mark> ReduceMarks(const std::vector<Mark>& marks, int64_t events, size_t buckets) {
  std::vector<Mark> out;
  const int64_t width = std::max<int64_t>(1, (events + 1) / static_cast<int64_t>(buckets) + 1);
  for (const Mark& m : marks)
    if (out.empty() || m.event / width != out.back().event / width) out.push_back(m);
  return out;
}

TEST_CASE("timeline: kept whole or reduced as the run goes, it equals reducing the whole run") {
  const auto [trace, baseline] = LoadWithBaseline("lstm");
  const RunSpec spec = SpecAtRatio("0.264");  // the slow regime: 43,292 evictions
  const size_t whole = size_t{1} << 30;
  // Every point and mark of the run, unreduced.
  const MemoryTimeline all = RecordTimeline(trace, baseline, spec, 1 << 30, 1 << 30, whole);
  REQUIRE_FALSE(all.reduced);
  REQUIRE_FALSE(all.marks_reduced);
  REQUIRE(all.points.size() == static_cast<size_t>(all.events));
  REQUIRE(all.events > 20000);
  REQUIRE(all.evictions.size() ==
          static_cast<size_t>(all.heuristic_evictions + all.eager_evictions));
  REQUIRE(all.remats.size() == static_cast<size_t>(all.remat_events));
  for (auto [points, marks] : {std::pair{200, 100}, std::pair{997, 1000000}, std::pair{1000000, 37}}) {
    CAPTURE(points);
    CAPTURE(marks);
    const bool reduce_points = all.points.size() > static_cast<size_t>(points);
    const bool reduce_marks = all.evictions.size() > static_cast<size_t>(marks) ||
                              all.remats.size() > static_cast<size_t>(marks);
    const auto want_points = reduce_points ? ReducePoints(all.points, points / 2) : all.points;
    const auto want_evictions =
        reduce_marks ? ReduceMarks(all.evictions, all.events, marks) : all.evictions;
    const auto want_remats = reduce_marks ? ReduceMarks(all.remats, all.events, marks) : all.remats;
    // Kept whole then reduced (one replay), and reduced as it goes (two).
    for (size_t keep : {whole, size_t{1}}) {
      CAPTURE(keep);
      const MemoryTimeline got = RecordTimeline(trace, baseline, spec, points, marks, keep);
      CHECK(got.budget == all.budget);
      CHECK(got.outcome == all.outcome);
      CHECK(got.events == all.events);
      CHECK(got.remat_events == all.remat_events);
      CHECK(got.heuristic_evictions == all.heuristic_evictions);
      CHECK(got.eager_evictions == all.eager_evictions);
      CHECK(got.reduced == reduce_points);
      CHECK(got.marks_reduced == reduce_marks);
      CHECK(got.points == want_points);
      CHECK(got.evictions == want_evictions);
      CHECK(got.remats == want_remats);
      if (got.reduced) CHECK(got.points.size() <= static_cast<size_t>(points));
    }
    CHECK(reduce_points == (points < 1000000));
    CHECK(reduce_marks == (marks < 1000000));
    // Reduced or not, the highest memory of the run is among the points.
    int64_t top = 0, all_top = 0;
    for (const TimelinePoint& p : want_points) top = std::max(top, p.memory);
    for (const TimelinePoint& p : all.points) all_top = std::max(all_top, p.memory);
    CHECK(top == all_top);
  }
}

TEST_CASE("report.json follows the schema table of docs/report_json.md") {
  DocumentedSchema documented = ReadDocumentedSchema();
  std::map<std::string, std::set<std::string>>& schema = documented.types;
  REQUIRE(schema.size() > 50);
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  json j = json::parse(ReportJson(trace, BuildReport(trace, Options(DemoRatios()))).dump());
  CHECK(j["schema_version"] == kReportSchemaVersion);
  std::map<std::string, std::vector<const json*>> seen;
  CollectPaths(j, "", seen);
  for (const auto& [path, values] : seen) {
    INFO("field ", path);
    if (!schema.count(path)) {
      // Inside an object documented by reference: its key must be named there.
      std::vector<std::string> docs = ReferencesFor(documented, path);
      REQUIRE_MESSAGE(!docs.empty(), "undocumented");
      std::string key = path.substr(path.find_last_of('.') + 1);
      CHECK_MESSAGE(NamedIn(docs, key), "not named in the documents it refers to");
      continue;
    }
    for (const json* v : values) {
      std::string type = TypeOf(*v);
      bool ok = schema[path].count(type) || (type == "integer" && schema[path].count("number"));
      CHECK_MESSAGE(ok, path, " has type ", type);
    }
  }
  // Every documented field appears in the demo's report (the demo has OOM
  // runs, an inversion, a cliff, frontiers, an inversion of the atlas,
  // policy-induced and inherent verdicts, divergences), except the fields of
  // an object that is null wherever it appears, and fields documented as
  // appearing "only" in some cases (e.g. an UNSAT window: no Z3 here).
  for (const auto& [path, types] : schema) {
    INFO("documented field ", path);
    if (seen.count(path) || documented.conditional.count(path)) continue;
    std::string parent = path.substr(0, path.rfind('.'));
    bool parent_always_null = seen.count(parent) > 0;
    for (const json* v : seen[parent]) parent_always_null &= v->is_null();
    CHECK_MESSAGE(parent_always_null, "documented but absent: ", path);
  }
  REQUIRE(j["heuristics"].size() == 1);
  const json& part = j["heuristics"][0];
  CHECK(part["verdicts"].is_array());
  CHECK(part["divergence"].is_array());
  CHECK(part["atlas"].is_object());
  // The atlas's intervals, as named fields, tile its walked sections.
  REQUIRE(part["atlas"]["intervals"].is_array());
  CHECK(part["atlas"]["intervals"].size() >= part["atlas"]["sections"].size());
  for (const json& s : part["atlas"]["sections"]) {
    int64_t next = s["lo"];
    for (const json& iv : part["atlas"]["intervals"])
      if (iv["budget_lo"] >= s["lo"] && iv["budget_lo"] <= s["hi"]) {
        CHECK(iv["budget_lo"] == next);
        next = static_cast<int64_t>(iv["budget_hi"]) + 1;
      }
    CHECK(next == static_cast<int64_t>(s["hi"]) + 1);
  }
  // Timeline points are objects with named fields.
  REQUIRE(part["timelines"].size() == 2);
  CHECK(part["timelines"][0]["points"][0].contains("memory"));
  size_t grid_rows = 0;
  for (const json& r : part["runs"]) grid_rows += r["source"] == "grid";
  CHECK(grid_rows == ParseRatios(DemoRatios()).size());
}

TEST_CASE(
    "HTML report is self-contained; Markdown has every section; optional sections render when "
    "filled") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  ReportModel m = BuildReport(trace, Options(DemoRatios()));
  std::ostringstream html, md;
  WriteHtmlReport(html, trace, m);
  WriteMarkdownReport(md, trace, m);
  std::string h = html.str();
  CHECK(h.rfind("<!DOCTYPE html>", 0) == 0);
  // One inline script (zoom and readout on the figures), nothing loaded.
  const size_t script = h.find("<script");
  REQUIRE(script != std::string::npos);
  CHECK(h.compare(script, 8, "<script>") == 0);
  CHECK(h.find("<script", script + 1) == std::string::npos);
  // The answer comes first: the headline, then the zoomed budget curve.
  const size_t answer = h.find("<section id=\"answer\"");
  REQUIRE(answer != std::string::npos);
  CHECK(answer < h.find("<section id=\"summary\""));
  CHECK(h.find("<dt>passes from</dt>") > answer);
  CHECK(h.find("<dt>proven floor</dt>") > answer);
  CHECK(h.find("<svg", answer) < h.find("<section id=\"summary\""));
  CHECK(md.str().find("## Answer\n\n- **passes from**") != std::string::npos);
  CHECK(h.find("url(") == std::string::npos);
  CHECK(h.find("@import") == std::string::npos);
  CHECK(h.find("<link") == std::string::npos);
  // The only URL is the SVG namespace name, which is never fetched.
  std::string no_ns = h;
  for (size_t p; (p = no_ns.find("http://www.w3.org/2000/svg")) != std::string::npos;)
    no_ns.erase(p, 26);
  CHECK(no_ns.find("http://") == std::string::npos);
  CHECK(no_ns.find("https://") == std::string::npos);
  size_t svgs = 0;
  for (size_t p = h.find("<svg"); p != std::string::npos; p = h.find("<svg", p + 1)) ++svgs;
  REQUIRE(m.frontiers);
  // Curve and zooms, the timeline, the stack by storage (the demo has no modules), frontiers.
  CHECK(svgs == CurveFigures(BudgetReport{{m}}).size() + 2 + m.frontiers->size());
  for (const char* id :
       {"summary", "curve", "runs", "timeline", "frontier", "verdicts", "divergence"})
    CHECK(h.find(std::string("<section id=\"") + id + "\"") != std::string::npos);
  CHECK(h.find("inversion</text>") != std::string::npos);  // the mark on the curve
  std::string s = md.str();
  for (const char* title : {"## Trace and baseline", "## Budget curve", "## Memory timeline",
                            "## Pinned frontier of each OOM", "## Verdicts and certificates",
                            "## Divergence between regimes"})
    CHECK(s.find(title) != std::string::npos);
  // The demo's verdicts and divergences are rendered with their commands.
  REQUIRE(m.verdicts);
  REQUIRE(m.divergence);
  CHECK(s.find("Not computed") == std::string::npos);
  for (const BudgetVerdict& v : *m.verdicts) {
    CHECK(s.find(v.command) != std::string::npos);
    CHECK(h.find("id=\"verdict-" + std::to_string(v.run) + "\"") != std::string::npos);
  }
  for (const RegimeDivergence& d : *m.divergence) {
    CHECK(s.find(d.command) != std::string::npos);
    CHECK(s.find(DiffText(trace, m, d)) != std::string::npos);  // what `dtrcheck diff` prints
  }

  // Turned off, each optional section says so instead of disappearing.
  ReportOptions off = Options(DemoRatios());
  off.atlas = false;
  off.verdicts = false;
  off.divergence = false;
  ReportModel bare = BuildReport(trace, off);
  std::ostringstream html2, md2;
  WriteHtmlReport(html2, trace, bare);
  WriteMarkdownReport(md2, trace, bare);
  for (const char* reason : {"Not computed: turned off (--no-atlas).",
                             "Not computed: turned off (--no-proofs).",
                             "Not computed: turned off (--no-divergence)."}) {
    CHECK(md2.str().find(reason) != std::string::npos);
    CHECK(html2.str().find(reason) != std::string::npos);
  }
  json j = json::parse(ReportJson(trace, bare).dump())["heuristics"][0];
  CHECK(j["verdicts"].is_null());
  CHECK(j["divergence"].is_null());
  CHECK(j["atlas"].is_null());
  CHECK(j["skipped"]["verdicts"] == "turned off (--no-proofs)");
}

TEST_CASE("WriteReportFiles writes three files, or fails with the path") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  ReportModel m = BuildReport(trace, Options("0.5,1.0"));
  std::filesystem::path dir = TempPath("dtrcheck_report_test");
  std::filesystem::remove_all(dir);
  std::vector<std::string> paths = WriteReportFiles(trace, m, (dir / "sub").string());
  CHECK(paths.size() == 3);
  for (const std::string& p : paths) CHECK(std::filesystem::file_size(p) > 100);
  std::ofstream((dir / "file").string()) << "x";
  CHECK_THROWS_AS(WriteReportFiles(trace, m, (dir / "file" / "sub").string()), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("--heuristic A,B: one part per heuristic, overlaid on one budget curve") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  ReportOptions o = Options("0.4:0.7:0.05");
  o.heuristics = {&FindHeuristic("DTR"), &FindHeuristic("LRU")};
  o.verdicts = false;
  o.divergence = false;
  BudgetReport report = BuildBudgetReport(trace, o);
  REQUIRE(report.heuristics.size() == 2);
  CHECK(report.heuristics[0].heuristic == "DTR");
  CHECK(report.heuristics[1].heuristic == "LRU");
  // Each part is the report of its heuristic alone.
  o.heuristic = &FindHeuristic("LRU");
  ReportModel lru = BuildReport(trace, o);
  REQUIRE(lru.rows.size() == report.heuristics[1].rows.size());
  for (size_t i = 0; i < lru.rows.size(); ++i) {
    CHECK(lru.rows[i].run.result.budget == report.heuristics[1].rows[i].run.result.budget);
    CHECK(lru.rows[i].run.result.outcome == report.heuristics[1].rows[i].run.result.outcome);
    CHECK(lru.rows[i].run.overhead == report.heuristics[1].rows[i].run.overhead);
  }
  json j = json::parse(ReportJson(trace, report).dump());
  CHECK(j["config"]["heuristics"] == json::array({"DTR", "LRU"}));
  CHECK(j["heuristics"][1]["heuristic"] == "LRU");
  // One curve draws both: each heuristic's atlas line and rows in its own colour.
  std::vector<Figure> curves = CurveFigures(report);
  REQUIRE_FALSE(curves.empty());
  const std::string& svg = curves[0].svg;
  CHECK(svg.find("DTR: overhead at every budget, run one by one") != std::string::npos);
  CHECK(svg.find("LRU: overhead at every budget, run one by one") != std::string::npos);
  CHECK(svg.find("class=\"atlas-line c0\"") != std::string::npos);
  CHECK(svg.find("class=\"atlas-line c1\"") != std::string::npos);
  // Timelines and frontiers per heuristic, named after it.
  CHECK(TimelineFigure(report, 0).name == "timeline-DTR");
  CHECK(TimelineFigure(report, 1).name == "timeline-LRU");
  std::ostringstream html;
  WriteHtmlReport(html, trace, report);
  CHECK(html.str().find("LRU") != std::string::npos);
}

TEST_CASE("a captured trace's report stacks memory by storage and by module") {
  Trace trace = LoadTrace(std::string(DTRCHECK_SOURCE_DIR) + "/tests/e2e/data/attributed.log");
  ReportModel m = BuildReport(trace, Options("0.5:1:0.1"));
  REQUIRE(m.memory_stack.by_module);
  // The stacked run is one the timeline draws, the passing one when there is one.
  bool drawn = false;
  for (const MemoryTimeline& t : m.timelines) drawn |= t.run == m.memory_stack.run;
  CHECK(drawn);
  std::ostringstream html, md;
  WriteHtmlReport(html, trace, m);
  WriteMarkdownReport(md, trace, m);
  CHECK(html.str().find("memory stacked by storage") != std::string::npos);
  CHECK(html.str().find("memory stacked by module") != std::string::npos);
  CHECK(md.str().find("| by storage | most at once (bytes) |") != std::string::npos);
  CHECK(md.str().find("| by module | most at once (bytes) |") != std::string::npos);
  CHECK(md.str().find("| parameters |") != std::string::npos);
  // At most eight legend entries, all bands (the budget is labelled on its line).
  for (const Figure& f : StackFigures(trace, BudgetReport{{m}}, 0)) {
    size_t entries = 0;
    for (size_t p = f.svg.find("legend-text"); p != std::string::npos; p = f.svg.find("legend-text", p + 1))
      ++entries;
    CHECK(entries <= 8);
  }
}

TEST_CASE("--figures writes each figure as a standalone SVG, beside or inside the report") {
  Trace trace = ParseTraceString(GenerateDemo(), "demo");
  BudgetReport report = BuildBudgetReport(trace, Options(DemoRatios()));
  std::filesystem::path dir = TempPath("dtrcheck_report_figures_test");
  std::filesystem::remove_all(dir);
  std::vector<std::string> paths =
      WriteReportFiles(trace, report, (dir / "report").string(), (dir / "figures").string());
  std::vector<Figure> curves = CurveFigures(report);
  REQUIRE(report.heuristics[0].frontiers);
  const size_t figures = curves.size() + 2 + report.heuristics[0].frontiers->size();
  REQUIRE(paths.size() == 3 + figures);
  CHECK(std::filesystem::exists(dir / "figures" / "curve.svg"));
  CHECK(std::filesystem::exists(dir / "figures" / "timeline.svg"));
  CHECK(std::filesystem::exists(dir / "figures" / "stack-storage.svg"));
  CHECK_FALSE(std::filesystem::exists(dir / "figures" / "stack-module.svg"));
  CHECK(std::filesystem::exists(dir / "figures" / "frontier-1.svg"));
  for (size_t i = 3; i < paths.size(); ++i) {
    INFO(paths[i]);
    std::ifstream in(paths[i]);
    std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Standalone: the SVG namespace, its own style sheet, a painted background.
    CHECK(svg.find("<svg") != std::string::npos);
    CHECK(svg.find("xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
    CHECK(svg.find("<style") != std::string::npos);
    CHECK(svg.find("<script") == std::string::npos);
  }
  // The report's own directory takes them into its set; a directory inside it is refused.
  paths = WriteReportFiles(trace, report, (dir / "report").string(), (dir / "report").string());
  CHECK(paths.size() == 3 + figures);
  CHECK(std::filesystem::exists(dir / "report" / "curve.svg"));
  CHECK_THROWS_WITH_AS(
      WriteReportFiles(trace, report, (dir / "report").string(), (dir / "report" / "f").string()),
      doctest::Contains("inside the report directory"), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("SVG helpers: ticks and escaping") {
  std::vector<double> lin = LinearTicks(0, 1, 5);
  REQUIRE(lin.size() == 6);
  for (size_t i = 0; i < lin.size(); ++i) CHECK(lin[i] == doctest::Approx(0.2 * i));
  CHECK(LinearTicks(0.3, 1.0, 8).front() == doctest::Approx(0.3));
  std::vector<double> log = LogTicks(1, 1000);
  CHECK(log == std::vector<double>{1, 10, 100, 1000});
  CHECK(LogTicks(1, 50).front() == 1);
  CHECK(XmlEscape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;");
}

TEST_CASE("SVG legend: a label wider than the plot wraps onto lines of its own") {
  auto texts = [](const std::string& svg) {
    size_t n = 0;
    for (size_t p = svg.find("class=\"legend-text\""); p != std::string::npos;
         p = svg.find("class=\"legend-text\"", p + 1))
      ++n;
    return n;
  };
  SvgPlot plot(300, 200);
  plot.AddLegend({LegendItem::Swatch::kLine, "a", {}, "short"});
  const std::string one = plot.Finish("t");
  CHECK(texts(one) == 1);
  std::string long_label;
  for (int i = 0; i < 20; ++i) long_label += "word" + std::to_string(i) + " ";
  plot.AddLegend({LegendItem::Swatch::kLine, "b", {}, long_label});
  plot.AddLegend({LegendItem::Swatch::kLine, "c", {}, "after"});
  const std::string wrapped = plot.Finish("t");
  CHECK(texts(wrapped) >= 1 + 3 + 1);  // 20 words of 6 to 7 characters do not fit 300 px
  for (int i = 0; i < 20; ++i)
    CHECK(wrapped.find("word" + std::to_string(i)) != std::string::npos);  // nothing cut
  // The canvas grows to hold every line.
  auto height = [](const std::string& svg) {
    size_t p = svg.find("height=\"") + 8;
    return std::stoi(svg.substr(p, svg.find('"', p) - p));
  };
  CHECK(height(wrapped) >= height(one) + 3 * 20);
}

TEST_CASE("svg plot: a narrow axis gets as many decimals as its ticks need, no two labels alike") {
  auto labels = [](double lo, double hi) {
    SvgPlot plot(600, 200);
    plot.SetX({lo, hi, false, "ratio", nullptr, {}});
    plot.SetY({1, 2, false, "overhead", nullptr, {}});
    plot.DrawAxes();
    const std::string svg = plot.Finish("t");
    std::vector<std::string> out;
    const std::string tag = "class=\"tick\" ";
    for (size_t p = svg.find(tag); p != std::string::npos; p = svg.find(tag, p + 1)) {
      size_t from = svg.find('>', p) + 1;
      out.push_back(svg.substr(from, svg.find('<', from) - from));
    }
    return out;
  };
  // The LSTM's zoom: ratios 0.210354 to 0.210410 all read "0.2104" at four digits.
  std::vector<std::string> narrow = labels(0.210354, 0.210410);
  REQUIRE(narrow.size() >= 4);
  CHECK(std::find(narrow.begin(), narrow.end(), "0.21037") != narrow.end());
  for (size_t i = 0; i + 1 < narrow.size(); ++i) CHECK(narrow[i] != narrow[i + 1]);
  // A wide axis keeps its short labels.
  std::vector<std::string> wide = labels(0.1, 1.0);
  CHECK(std::find(wide.begin(), wide.end(), "0.2") != wide.end());
}

}  // namespace
}  // namespace dtr::testing
