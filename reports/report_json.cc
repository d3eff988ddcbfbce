#include "reports/report_json.h"

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
// adds the grid's ratio text, the run's length, its exact interval with an
// unbounded end as null, and the curve's findings.
ordered_json RowJson(const BudgetRow& row) {
  const RunResult& r = row.run.result;
  ordered_json j;
  j["ratio"] = row.run.spec.ratio ? ordered_json(row.run.spec.ratio->value) : ordered_json(nullptr);
  j["ratio_text"] =
      row.run.spec.ratio ? ordered_json(row.run.spec.ratio->text) : ordered_json(nullptr);
  WriteRunCounters(j, row.run);
  j["evictions_per_evicted_storage"] = row.evictions_per_evicted_storage;
  j["events"] = r.events;
  j["budget_lo"] = r.budget_lo;
  j["budget_hi"] = Bytes(r.budget_hi);
  j["inversion"] = row.inversion;
  j["oom"] = r.oom ? OomJson(*r.oom) : ordered_json(nullptr);
  return j;
}

ordered_json CurveJson(const CurveShape& c) {
  ordered_json bands = ordered_json::array();
  for (const OomBand& b : c.oom_bands) {
    ordered_json known = ordered_json::array();
    for (const auto& [lo, hi] : b.known_oom) known.push_back({lo, Bytes(hi)});
    bands.push_back({{"first_run", b.first_run},
                     {"last_run", b.last_run},
                     {"known_oom", known},
                     {"feasible_below", b.feasible_below},
                     {"feasible_above", b.feasible_above},
                     {"exact_lower_edge", b.exact_lower_edge},
                     {"exact_upper_edge", b.exact_upper_edge}});
  }
  ordered_json cliffs = ordered_json::array();
  for (const Cliff& k : c.cliffs)
    cliffs.push_back({{"low_run", k.low_run}, {"high_run", k.high_run}, {"factor", k.factor}});
  return {{"oom_bands", bands}, {"inversions", c.inversions}, {"cliffs", cliffs}};
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

ordered_json FrontierJson(const OomFrontier& f) {
  ordered_json frames = ordered_json::array();
  for (const ReportFrame& fr : f.frames) {
    ordered_json args = ordered_json::array();
    for (const FrontierArg& a : fr.args)
      args.push_back({{"tensor", a.tensor}, {"storage_size", a.storage_size}, {"state", a.state}});
    frames.push_back({{"depth", fr.depth},
                      {"tensor", fr.tensor},
                      {"op", fr.op},
                      {"output_size", fr.output_size},
                      {"locked_bytes", fr.locked_bytes},
                      {"args", args}});
  }
  ordered_json intervals = ordered_json::array();
  for (const auto& [lo, hi] : f.budget_intervals) intervals.push_back({lo, Bytes(hi)});
  return {{"runs", f.runs},
          {"budget_intervals", intervals},
          {"oom", OomJson(f.oom)},
          {"pinned_bytes", f.pinned_bytes},
          {"frame_locked_bytes", f.frame_locked_bytes},
          {"frames", frames}};
}

}  // namespace

ordered_json ReportJson(const ReportModel& m) {
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
  for (const BudgetRow& row : m.rows) runs.push_back(RowJson(row));
  j["runs"] = runs;
  j["curve"] = CurveJson(m.curve);
  j["timeline"] = m.timeline ? TimelineJson(*m.timeline) : ordered_json(nullptr);
  ordered_json frontiers = ordered_json::array();
  for (const OomFrontier& f : m.frontiers) frontiers.push_back(FrontierJson(f));
  j["frontiers"] = frontiers;
  if (m.verdicts) {
    ordered_json v = ordered_json::array();
    for (const Verdict& x : *m.verdicts)
      v.push_back({{"run", x.run},
                   {"verdict", x.verdict},
                   {"certificate", x.certificate},
                   {"certificate_checked", x.certificate_checked}});
    j["verdicts"] = v;
  } else {
    j["verdicts"] = nullptr;
  }
  if (m.divergence) {
    ordered_json v = ordered_json::array();
    for (const Divergence& x : *m.divergence)
      v.push_back({{"run_a", x.run_a},
                   {"run_b", x.run_b},
                   {"first_divergent_decision", x.first_divergent_decision},
                   {"summary", x.summary}});
    j["divergence"] = v;
  } else {
    j["divergence"] = nullptr;
  }
  return j;
}

}  // namespace dtr
