#include "reports/report_json.h"

#include "reports/instability_report.h"
#include "reports/proof_report.h"
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
ordered_json OomJson(const OomContext& o) {
  ordered_json j = OomContextJson(o);
  j["program_step"] = o.program_step;
  j["event"] = o.event;
  return j;
}

// The run's counters come from the writer `replay --json` uses; the report
// adds the grid's ratio text, evictions per storage (as a scan point has
// them), the run's length, its exact interval with an unbounded end as null,
// and what the curve says about it.
ordered_json RowJson(const BudgetRow& row, const ScanPoint& point) {
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
  j["regime"] = row.regime;
  j["inversion"] = row.inversion ? ordered_json(*row.inversion) : ordered_json(nullptr);
  j["oom"] = r.oom ? OomJson(*r.oom) : ordered_json(nullptr);
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
  j["exact_inversions"] = c.exact_inversions && m.atlas
                              ? ExactInversionsJson(TraceSummary{m.trace.name, m.trace.baseline},
                                                    m.atlas->atlas, *c.exact_inversions)
                              : ordered_json(nullptr);
  return j;
}

ordered_json TimelineJson(const MemoryTimeline& t) {
  ordered_json points = ordered_json::array();
  for (const TimelinePoint& p : t.points)
    points.push_back({p.event, p.clock, p.memory, p.remat ? 1 : 0});
  return {{"run", t.run},
          {"selection", t.selection},
          {"budget", t.budget},
          {"events", t.events},
          {"remat_events", t.remat_events},
          {"reduced", t.reduced},
          {"points", points},
          {"decision_events", t.decision_events},
          {"oom", t.oom ? OomJson(*t.oom) : ordered_json(nullptr)}};
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

ordered_json AtlasJson(const ReportAtlas& a) {
  const BudgetAtlas& at = a.atlas;
  ordered_json j;
  j["lo"] = a.lo;
  j["hi"] = a.hi;
  j["complete"] = !at.stopped;
  j["replays"] = at.runs;
  j["max_replays"] = a.max_runs;
  j["covered"] = at.covered;
  const AtlasSummary& s = at.summary;
  auto count = [&](int64_t v) { return at.stopped ? ordered_json(nullptr) : ordered_json(v); };
  j["intervals"] = count(static_cast<int64_t>(s.intervals));
  j["distinct_behaviours"] = count(static_cast<int64_t>(s.distinct_behaviours));
  j["feasible_width"] = count(s.feasible_width);
  j["infeasible_width"] = count(s.infeasible_width);
  j["smallest_feasible"] = Optional(s.smallest_feasible);
  j["largest_oom"] = Optional(s.largest_oom);
  ordered_json infeasible = ordered_json::array();
  for (const auto& [lo, hi] : a.infeasible) infeasible.push_back({lo, hi});
  j["infeasible"] = infeasible;
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

}  // namespace

ordered_json ReportJson(const Trace& trace, const ReportModel& m) {
  ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["tool"] = "dtrcheck";
  const Baseline& b = m.trace.baseline;
  j["trace"] = {{"name", m.trace.name},
                {"source", m.trace.source},
                {"operators", m.trace.operators},
                {"constants", m.trace.constants},
                {"tensors", m.trace.tensors},
                {"aliases", m.trace.aliases},
                {"storages", m.trace.storages},
                {"program_steps", m.trace.program_steps},
                {"baseline",
                 {{"memory", b.memory},
                  {"compute", b.compute},
                  {"const_memory", b.const_memory},
                  {"bottleneck_memory", b.bottleneck_memory}}}};
  j["config"] = {{"heuristic", m.heuristic},
                 {"runtime", m.runtime},
                 {"ratios", m.ratios_text},
                 {"overhead_limit",
                  m.overhead_limit ? ordered_json(*m.overhead_limit) : ordered_json(nullptr)},
                 {"cliff_factor", m.cliff_factor}};
  ordered_json runs = ordered_json::array();
  for (size_t i = 0; i < m.rows.size(); ++i) runs.push_back(RowJson(m.rows[i], m.curve.points[i]));
  j["runs"] = runs;
  j["curve"] = CurveJson(m);
  j["timeline"] = m.timeline ? TimelineJson(*m.timeline) : ordered_json(nullptr);
  if (m.frontiers) {
    ordered_json frontiers = ordered_json::array();
    for (const OomFrontier& f : *m.frontiers) frontiers.push_back(OomFrontierJson(trace, f));
    j["frontiers"] = frontiers;
  } else {
    j["frontiers"] = nullptr;
  }
  j["atlas"] = m.atlas ? AtlasJson(*m.atlas) : ordered_json(nullptr);
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

}  // namespace dtr
