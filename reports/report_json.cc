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
  j["regime"] = row.regime;
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
  ordered_json regimes = ordered_json::array();
  for (const ScanRegime& r : c.regimes) {
    ordered_json ranges = ordered_json::array();
    for (const GridRange& g : r.ranges) ranges.push_back({g.from, g.to});
    regimes.push_back({{"outcome", std::string(OutcomeName(r.outcome))},
                       {"overhead_min", r.overhead_min},
                       {"overhead_max", r.overhead_max},
                       {"per_storage_min", r.per_storage_min},
                       {"per_storage_max", r.per_storage_max},
                       {"runs", r.runs},
                       {"ranges", ranges}});
  }
  return {
      {"regimes", regimes}, {"oom_bands", bands}, {"inversions", c.inversions}, {"cliffs", cliffs}};
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

ordered_json Optional(const std::optional<int64_t>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

ordered_json AtlasJson(const ReportAtlas& a, int64_t baseline_memory) {
  const BudgetAtlas& at = a.atlas;
  auto ratio = [&](int64_t b) {
    return static_cast<double>(b) / static_cast<double>(baseline_memory);
  };
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
  ordered_json holes = ordered_json::array();
  for (const FeasibilityHole& h : s.holes)
    holes.push_back({{"lo", h.lo},
                     {"hi", h.hi},
                     {"width", h.width()},
                     {"ratio_lo", ratio(h.lo)},
                     {"ratio_hi", ratio(h.hi)},
                     {"intervals", h.last - h.first + 1},
                     {"outcome", h.has_oom && h.has_thrash ? "oom and thrash"
                                 : h.has_thrash            ? "thrash"
                                                           : "oom"}});
  j["holes"] = holes;
  return j;
}

ordered_json VerdictJson(const ReportModel& m, const BudgetVerdict& v) {
  const Classification& c = v.classification;
  const BudgetRow& row = m.rows[v.run];
  ordered_json j;
  j["run"] = v.run;
  j["ratio_text"] =
      row.run.spec.ratio ? ordered_json(row.run.spec.ratio->text) : ordered_json(nullptr);
  j["budget"] = c.budget;
  j["verdict"] = v.verdict;
  j["certificate"] = v.certificate;
  j["certificate_checked"] = v.certificate_checked;
  std::string type;
  if (c.witness_search.witness)
    type = "script";
  else if (c.proof)
    type = c.proof->kind == InherentProof::Kind::kStaticBound ? "static-bound" : "unsat-window";
  j["certificate_type"] = type.empty() ? ordered_json(nullptr) : ordered_json(type);
  if (c.witness_search.witness) {
    const Witness& w = *c.witness_search.witness;
    j["script"] = {{"source", w.source},
                   {"description", w.description},
                   {"evictions", w.script.entries.size()},
                   {"check",
                    {{"budget", w.check.budget},
                     {"result", std::string(OutcomeName(w.check.outcome))},
                     {"max_memory", w.check.run.max_memory}}}};
  } else {
    j["script"] = nullptr;
  }
  if (c.proof && c.proof->kind == InherentProof::Kind::kWindowUnsat) {
    const WindowQuery& q = c.proof->window;
    j["unsat_window"] = {{"first_op", q.window.first},
                         {"last_op", q.window.last},
                         {"storages", q.storages},
                         {"seconds", q.seconds}};
  } else {
    j["unsat_window"] = nullptr;
  }
  j["static_bound"] = c.static_bound.bytes;
  j["witness_attempts"] = c.witness_search.attempts.size();
  j["z3_windows"] = c.window_queries.size();
  j["command"] = v.command;
  return j;
}

ordered_json StatsJson(const RunProfile& p) {
  return {{"result", std::string(OutcomeName(p.outcome))},
          {"overhead", p.overhead},
          {"evictions", p.all.evictions},
          {"distinct_evicted", p.all.distinct},
          {"per_storage", p.all.per_storage},
          {"heuristic_evictions", p.heuristic.evictions},
          {"distinct_heuristic_evicted", p.heuristic.distinct},
          {"heuristic_per_storage", p.heuristic.per_storage}};
}

ordered_json DivergenceJson(const RegimeDivergence& d) {
  const RunComparison& c = d.comparison;
  const FirstDivergence& f = c.first;
  ordered_json j;
  j["run_a"] = d.run_a;
  j["run_b"] = d.run_b;
  j["edge"] = d.edge;
  j["first_divergent_decision"] = d.first_divergent_decision;
  j["kind"] = std::string(DivergenceKindName(f.kind));
  j["in"] = f.in ? ordered_json(std::string(1, f.in)) : ordered_json(nullptr);
  const std::optional<DecisionPoint>& at = f.in == 'b' ? f.b : f.a;
  j["event"] = at ? ordered_json(at->event) : ordered_json(nullptr);
  j["decisions_after_a"] = c.after.after_a;
  j["decisions_after_b"] = c.after.after_b;
  j["differing_after"] = c.after.differing();
  ordered_json sets = nullptr;
  if (c.first_term_flip && c.first_term_flip->flip) {
    sets = ordered_json::array();
    for (const std::vector<ScoreTerm>& set : c.first_term_flip->flip->flipping_terms) {
      ordered_json one = ordered_json::array();
      for (ScoreTerm t : set) one.push_back(std::string(ScoreTermName(t)));
      sets.push_back(one);
    }
  }
  j["flipping_terms"] = sets;
  j["a"] = StatsJson(c.a);
  j["b"] = StatsJson(c.b);
  j["jaccard_all"] = c.jaccard_all;
  j["overhead_ratio"] = c.overhead_ratio;
  j["summary"] = d.summary;
  j["command"] = d.command;
  return j;
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
  j["atlas"] = m.atlas ? AtlasJson(*m.atlas, m.trace.baseline.memory) : ordered_json(nullptr);
  if (m.verdicts) {
    ordered_json v = ordered_json::array();
    for (const BudgetVerdict& x : *m.verdicts) v.push_back(VerdictJson(m, x));
    j["verdicts"] = v;
  } else {
    j["verdicts"] = nullptr;
  }
  j["explain_flags"] = m.explain_flags;
  if (m.divergence) {
    ordered_json v = ordered_json::array();
    for (const RegimeDivergence& x : *m.divergence) v.push_back(DivergenceJson(x));
    j["divergence"] = v;
  } else {
    j["divergence"] = nullptr;
  }
  j["skipped"] = {{"atlas", m.atlas_skipped},
                  {"verdicts", m.verdicts_skipped},
                  {"divergence", m.divergence_skipped}};
  return j;
}

}  // namespace dtr
