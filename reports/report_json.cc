#include "reports/report_json.h"

#include "diagnose/module_memory.h"
#include "diagnose/pinned_floor.h"
#include "model/error.h"
#include "reports/atlas_report.h"
#include "reports/instability_report.h"
#include "reports/pinned_floor_report.h"
#include "reports/proof_report.h"
#include "reports/report_headline.h"
#include "reports/run_report.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

// kInfiniteBudget is written as null: JSON readers often hold numbers as doubles.
ordered_json Bytes(int64_t b) {
  return b == kInfiniteBudget ? ordered_json(nullptr) : ordered_json(b);
}

// simrd's OOM fields (the same writer as `replay --json`), plus where the
// failure happened in the program and in the run.
ordered_json OomJson(const OomContext& o, const Trace& trace) {
  ordered_json j = OomContextJson(o, &trace);
  j["program_step"] = o.program_step;
  j["event"] = o.event;
  return j;
}

// The run's counters come from the writer `replay --json` uses; the report
// adds the grid's ratio text, evictions per storage (as a scan point has
// them), the run's length, its exact interval with an unbounded end as null,
// and what the curve says about it.
ordered_json RowJson(const Trace& trace, const BudgetRow& row, const ScanPoint& point) {
  const RunResult& r = row.run.result;
  ordered_json j;
  j["ratio"] = row.run.spec.ratio ? ordered_json(row.run.spec.ratio->value) : ordered_json(nullptr);
  j["ratio_text"] =
      row.run.spec.ratio ? ordered_json(row.run.spec.ratio->text) : ordered_json(nullptr);
  WriteRunCounters(j, row.run);
  j["evictions_per_storage"] = point.evictions_per_storage();
  j["events"] = r.events;
  j["budget_lo"] = r.budget_lo;
  j["budget_hi"] = Bytes(r.budget_hi);
  j["source"] = std::string(RowSourceName(row.source));
  j["source_reason"] = row.source_reason;
  j["regime"] = row.regime;
  j["inversion"] = row.inversion ? ordered_json(*row.inversion) : ordered_json(nullptr);
  j["oom"] = r.oom ? OomJson(*r.oom, trace) : ordered_json(nullptr);
  return j;
}

// The scan's own writer for regimes, cliffs and inversions (the same names
// as `dtrcheck scan --json`), then the OOM stretches the curve draws and,
// with a complete atlas, the exact inversions (as `scan --exact --json`).
ordered_json CurveJson(const ReportModel& m) {
  const CurveShape& c = m.curve;
  ordered_json j = CurveAnalysisJson(c.analysis, c.points);
  ordered_json stretches = ordered_json::array();
  for (const OomStretch& s : c.oom_stretches) {
    ordered_json known = ordered_json::array();
    for (const auto& [lo, hi] : s.known_oom) known.push_back({lo, Bytes(hi)});
    stretches.push_back(
        {{"first_run", s.from},
         {"last_run", s.to},
         {"known_oom", known},
         {"inversion", s.inversion ? ordered_json(*s.inversion) : ordered_json(nullptr)},
         {"exact_lower_edge", s.exact_lower_edge},
         {"exact_upper_edge", s.exact_upper_edge}});
  }
  j["oom_bands"] = stretches;
  if (c.exact_inversions && m.atlas) {
    // The scan's writer, section by section, each object told its section.
    ordered_json exact = ordered_json::array();
    for (const AtlasInversion& v : *c.exact_inversions) {
      ordered_json one = ExactInversionsJson(TraceSummary{m.trace.name, m.trace.baseline},
                                             m.atlas->sections[v.section], {v.where})[0];
      one["section"] = v.section;
      exact.push_back(std::move(one));
    }
    j["exact_inversions"] = exact;
  } else {
    j["exact_inversions"] = nullptr;
  }
  return j;
}

ordered_json TimelineJson(const Trace& trace, const MemoryTimeline& t) {
  ordered_json points = ordered_json::array();
  for (const TimelinePoint& p : t.points)
    points.push_back({{"event", p.event},
                      {"program_step", p.program_step},
                      {"clock", p.clock},
                      {"memory", p.memory},
                      {"remat", p.remat}});
  ordered_json evictions = ordered_json::array();
  for (const TimelineEviction& e : t.evictions)
    evictions.push_back({{"event", e.event},
                         {"program_step", e.program_step},
                         {"kind", e.heuristic ? "heuristic" : "eager"},
                         {"storage", trace.tensors[trace.storages[e.storage].root].name},
                         {"bytes", e.bytes},
                         {"memory", e.heuristic ? ordered_json(e.memory) : ordered_json(nullptr)}});
  ordered_json remats = ordered_json::array();
  for (const TimelineRemat& r : t.remats)
    remats.push_back({{"event", r.event},
                      {"program_step", r.program_step},
                      {"tensor", trace.tensors[r.tensor].name},
                      {"memory", r.memory}});
  return {{"run", t.run},
          {"role", t.role},
          {"budget", t.budget},
          {"result", std::string(OutcomeName(t.outcome))},
          {"events", t.events},
          {"program_steps", t.program_steps},
          {"remat_events", t.remat_events},
          {"heuristic_evictions", t.heuristic_evictions},
          {"eager_evictions", t.eager_evictions},
          {"reduced", t.reduced},
          {"points", points},
          {"marks_reduced", t.marks_reduced},
          {"evictions", evictions},
          {"remats", remats},
          {"oom", t.oom ? OomJson(*t.oom, trace) : ordered_json(nullptr)}};
}

// The runs sharing the failure state, then `dtrcheck frontier --json`'s
// fields for it.
ordered_json OomFrontierJson(const Trace& trace, const OomFrontier& f) {
  ordered_json intervals = ordered_json::array();
  for (const auto& [lo, hi] : f.budget_intervals) intervals.push_back({lo, Bytes(hi)});
  ordered_json j = {{"runs", f.runs}, {"budget_intervals", intervals}};
  j.update(FrontierFieldsJson(trace, f.frontier));
  return j;
}

ordered_json Optional(const std::optional<int64_t>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json AtlasCoverageJson(const ReportModel& m, const AtlasCoverage& a) {
  const TraceSummary summary{m.trace.name, m.trace.baseline};
  ordered_json j;
  j["lo"] = a.lo;
  j["hi"] = a.hi;
  j["max_replays"] = a.cap.runs;
  j["max_evals"] = a.cap.evals;
  j["replays"] = a.replays;
  j["evals"] = a.evals;
  j["complete"] = a.complete();
  j["budget_ran_out"] = a.budget_ran_out;
  j["covered"] = a.covered();
  j["coverage"] = static_cast<double>(a.covered()) / static_cast<double>(a.hi - a.lo + 1);
  ordered_json windows = ordered_json::array();
  for (const AtlasWindow& w : a.windows)
    windows.push_back({{"lo", w.lo},
                       {"hi", w.hi},
                       {"reason", std::string(WindowReasonName(w.reason))},
                       {"replays", w.replays},
                       {"walked", w.walked_bytes}});
  j["windows"] = windows;
  ordered_json sections = ordered_json::array(), intervals = ordered_json::array();
  std::optional<int64_t> smallest, largest_oom;
  for (size_t k = 0; k < a.sections.size(); ++k) {
    const BudgetAtlas& s = a.sections[k];
    sections.push_back({{"lo", s.lo},
                        {"hi", s.hi},
                        {"replays", s.runs},
                        {"intervals", s.intervals.size()},
                        {"distinct_behaviours", s.summary.distinct_behaviours},
                        {"feasible_width", s.summary.feasible_width},
                        {"infeasible_width", s.summary.infeasible_width}});
    for (const AtlasInterval& iv : s.intervals) {
      ordered_json one = AtlasIntervalJson(summary, iv);
      one["section"] = k;
      intervals.push_back(std::move(one));
    }
    if (!smallest && s.summary.smallest_feasible) smallest = s.summary.smallest_feasible;
    if (s.summary.largest_oom) largest_oom = s.summary.largest_oom;
  }
  j["sections"] = sections;
  ordered_json gaps = ordered_json::array();
  for (const auto& [lo, hi] : a.Gaps()) gaps.push_back({lo, hi});
  j["gaps"] = gaps;
  j["smallest_feasible"] = Optional(smallest);
  j["largest_oom"] = Optional(largest_oom);
  ordered_json infeasible = ordered_json::array();
  for (const auto& [lo, hi] : a.Infeasible()) infeasible.push_back({lo, hi});
  j["infeasible"] = infeasible;
  j["intervals"] = intervals;
  return j;
}

// The row, then `dtrcheck explain --json`'s verdict fields for its budget.
ordered_json VerdictJson(const Trace& trace, const ReportModel& m, const BudgetVerdict& v) {
  const BudgetRow& row = m.rows[v.run];
  ordered_json j;
  j["run"] = v.run;
  j["ratio_text"] =
      row.run.spec.ratio ? ordered_json(row.run.spec.ratio->text) : ordered_json(nullptr);
  j["budget"] = v.classification.budget;
  j.update(VerdictFieldsJson(trace, m.trace.baseline, v.classification));
  j["command"] = v.command;
  return j;
}

// The pair of rows, then `dtrcheck diff --json`'s fields for it.
ordered_json DivergenceJson(const Trace& trace, const RegimeDivergence& d) {
  ordered_json j;
  j["run_a"] = d.run_a;
  j["run_b"] = d.run_b;
  j["edge"] = std::string(RegimeEdgeName(d.edge));
  j.update(ComparisonJson(trace, d.comparison));
  j["command"] = d.command;
  return j;
}

// One heuristic's part of the report.
ordered_json HeuristicJson(const Trace& trace, const ReportModel& m) {
  ordered_json j;
  j["heuristic"] = m.heuristic;
  j["headline"] = HeadlineJson(m.headline);
  ordered_json runs = ordered_json::array();
  for (size_t i = 0; i < m.rows.size(); ++i) runs.push_back(RowJson(trace, m.rows[i], m.curve.points[i]));
  j["runs"] = runs;
  j["curve"] = CurveJson(m);
  ordered_json timelines = ordered_json::array();
  for (const MemoryTimeline& t : m.timelines) timelines.push_back(TimelineJson(trace, t));
  j["timelines"] = timelines;
  j["timeline_selection"] = m.timeline_selection;
  if (m.timeline_divergence) {
    const FirstDivergence& d = *m.timeline_divergence;
    const std::optional<DecisionPoint>& p = d.a ? d.a : d.b;
    j["timeline_divergence"] = {{"decision", d.index},
                                {"kind", std::string(DivergenceKindName(d.kind))},
                                {"program_step", p ? ordered_json(p->program_step) : ordered_json(nullptr)},
                                {"event", p ? ordered_json(p->event) : ordered_json(nullptr)}};
  } else {
    j["timeline_divergence"] = nullptr;
  }
  if (m.frontiers) {
    ordered_json frontiers = ordered_json::array();
    for (const OomFrontier& f : *m.frontiers) frontiers.push_back(OomFrontierJson(trace, f));
    j["frontiers"] = frontiers;
  } else {
    j["frontiers"] = nullptr;
  }
  j["atlas"] = m.atlas ? AtlasCoverageJson(m, *m.atlas) : ordered_json(nullptr);
  if (m.verdicts) {
    ordered_json v = ordered_json::array();
    for (const BudgetVerdict& x : *m.verdicts) v.push_back(VerdictJson(trace, m, x));
    j["verdicts"] = v;
  } else {
    j["verdicts"] = nullptr;
  }
  j["explain_flags"] = m.explain_flags;
  if (m.divergence) {
    ordered_json v = ordered_json::array();
    for (const RegimeDivergence& x : *m.divergence) v.push_back(DivergenceJson(trace, x));
    j["divergence"] = v;
  } else {
    j["divergence"] = nullptr;
  }
  j["skipped"] = {{"frontiers", m.frontiers_skipped},
                  {"atlas", m.atlas_skipped},
                  {"verdicts", m.verdicts_skipped},
                  {"divergence", m.divergence_skipped}};
  return j;
}

}  // namespace

ordered_json ReportJson(const Trace& trace, const BudgetReport& report) {
  if (report.heuristics.empty()) throw Error("report: no heuristic");
  const ReportModel& first = report.heuristics.front();
  ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["tool"] = "dtrcheck";
  const Baseline& b = first.trace.baseline;
  j["trace"] = {{"name", first.trace.name},
                {"source", first.trace.source},
                {"operators", first.trace.operators},
                {"constants", first.trace.constants},
                {"tensors", first.trace.tensors},
                {"aliases", first.trace.aliases},
                {"storages", first.trace.storages},
                {"program_steps", first.trace.program_steps},
                {"baseline",
                 {{"memory", b.memory},
                  {"compute", b.compute},
                  {"const_memory", b.const_memory},
                  {"bottleneck_memory", b.bottleneck_memory}}}};
  if (std::optional<PinnedFloor> floor = ExplainPinnedFloor(trace))
    j["trace"]["pinned_floor"] = PinnedFloorJson(trace, *floor, b);
  if (std::optional<std::vector<ModuleMemory>> modules = MemoryByModule(trace)) {
    ordered_json rows = ordered_json::array();
    for (const ModuleMemory& m : *modules)
      rows.push_back({{"module", m.module},
                      {"forward_ops", m.forward_ops},
                      {"forward_bytes", m.forward_bytes},
                      {"forward_compute", m.forward_compute},
                      {"backward_ops", m.backward_ops},
                      {"backward_bytes", m.backward_bytes},
                      {"backward_compute", m.backward_compute}});
    j["trace"]["modules"] = rows;
  }
  ordered_json names = ordered_json::array();
  for (const ReportModel& m : report.heuristics) names.push_back(m.heuristic);
  j["config"] = {{"heuristics", names},
                 {"runtime", first.runtime},
                 {"ratios", first.ratios_text},
                 {"overhead_limit",
                  first.overhead_limit ? ordered_json(*first.overhead_limit) : ordered_json(nullptr)},
                 {"cliff_factor", first.cliff_factor}};
  ordered_json parts = ordered_json::array();
  for (const ReportModel& m : report.heuristics) parts.push_back(HeuristicJson(trace, m));
  j["heuristics"] = parts;
  return j;
}

ordered_json ReportJson(const Trace& trace, const ReportModel& model) {
  return ReportJson(trace, BudgetReport{{model}});
}

}  // namespace dtr
