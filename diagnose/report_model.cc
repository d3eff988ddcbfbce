#include "diagnose/report_model.h"

#include <fmt/core.h>

#include <algorithm>

#include "checker/parallel.h"
#include "model/error.h"

namespace dtr {

namespace {

TraceFacts Facts(const Trace& trace, const ReportOptions& options, const Baseline& baseline) {
  TraceFacts f;
  f.name = options.trace_name;
  f.source = options.trace_source;
  f.operators = static_cast<int64_t>(trace.ops.size());
  for (const Operator& op : trace.ops) f.constants += op.is_constant;
  f.tensors = static_cast<int64_t>(trace.tensors.size());
  for (const Tensor& t : trace.tensors) f.aliases += t.is_alias;
  f.storages = static_cast<int64_t>(trace.storages.size());
  f.program_steps = static_cast<int64_t>(trace.program.size());
  f.baseline = baseline;
  return f;
}

// Records what the memory timeline shows.
class TimelineRecorder : public ReplayObserver {
 public:
  Flow OnComputation(const Computation& c) override {
    points.push_back({c.event, c.clock, c.memory_usage, c.remat});
    return Flow::kContinue;
  }
  Flow OnDecision(const DecisionPoint& d) override {
    decisions.push_back(d.event);
    return Flow::kContinue;
  }

  std::vector<TimelinePoint> points;
  std::vector<int64_t> decisions;
};

RunResult ReplayObserved(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                         ReplayObserver* observer) {
  ReplayConfig config = ConfigFor(spec, baseline);
  config.observer = observer;
  return Replay(trace, config);
}

// Keeps the lowest and the highest point of each of `buckets` event ranges.
std::vector<TimelinePoint> ReducePoints(const std::vector<TimelinePoint>& points, size_t buckets) {
  std::vector<TimelinePoint> out;
  size_t n = points.size();
  for (size_t b = 0; b < buckets; ++b) {
    size_t begin = n * b / buckets, end = n * (b + 1) / buckets;
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

MemoryTimeline BuildTimeline(const Trace& trace, const Baseline& baseline,
                             const std::vector<BudgetRow>& rows, size_t run, std::string selection,
                             int max_points) {
  MemoryTimeline tl;
  tl.run = run;
  tl.selection = std::move(selection);
  TimelineRecorder rec;
  RunResult r = ReplayObserved(trace, baseline, rows[run].run.spec, &rec);
  tl.budget = r.budget;
  tl.events = r.events;
  for (const TimelinePoint& p : rec.points) tl.remat_events += p.remat;
  tl.oom = r.oom;
  size_t limit = static_cast<size_t>(std::max(2, max_points));
  if (rec.points.size() > limit) {
    tl.reduced = true;
    tl.points = ReducePoints(rec.points, limit / 2);
    int64_t width = std::max<int64_t>(1, r.events / static_cast<int64_t>(limit));
    for (int64_t e : rec.decisions)
      if (tl.decision_events.empty() || e / width != tl.decision_events.back() / width)
        tl.decision_events.push_back(e);
  } else {
    tl.points = std::move(rec.points);
    tl.decision_events = std::move(rec.decisions);
  }
  return tl;
}

// The frontier at the OOM shared by `runs` (rows with the same failure).
OomFrontier BuildFrontier(const Trace& trace, const Baseline& baseline,
                          const std::vector<BudgetRow>& rows, std::vector<size_t> runs) {
  OomFrontier f;
  f.runs = std::move(runs);
  for (size_t i : f.runs) {
    std::pair<int64_t, int64_t> span{rows[i].run.result.budget_lo, rows[i].run.result.budget_hi};
    if (f.budget_intervals.empty() || f.budget_intervals.back() != span)
      f.budget_intervals.push_back(span);
  }
  f.frontier = FrontierAtOom(trace, ConfigFor(rows[f.runs.front()].run.spec, baseline));
  return f;
}

bool SameFailure(const OomContext& a, const OomContext& b) {
  return a.program_op == b.program_op && a.op == b.op && a.tensor == b.tensor &&
         a.request == b.request && a.memory_usage == b.memory_usage &&
         a.pinned_memory == b.pinned_memory && a.locked_memory == b.locked_memory &&
         a.locked_storages == b.locked_storages && a.remat_depth == b.remat_depth &&
         a.program_step == b.program_step && a.event == b.event && a.frames == b.frames;
}

void StartStage(const ReportOptions& o, const char* name) {
  if (o.stage) o.stage(name);
}

RunSpec SpecOf(const ReportOptions& o) {
  RunSpec s;
  s.heuristic = o.heuristic;
  s.runtime = o.runtime;
  s.overhead_limit = o.overhead_limit;
  return s;
}

ReportAtlas BuildReportAtlas(const Trace& trace, const Baseline& baseline, const ReportModel& m,
                             const ReportOptions& options) {
  StartStage(options, "atlas");
  ReportAtlas a;
  a.lo = m.rows.front().run.result.budget;
  a.hi = m.rows.back().run.result.budget;
  a.max_runs = options.atlas_max_runs;
  a.atlas = BuildAtlas(
      trace, baseline, SpecOf(options), a.lo, a.hi, options.jobs,
      [&](int64_t covered, int64_t total, size_t) {
        if (options.progress)
          options.progress(static_cast<size_t>(covered), static_cast<size_t>(total));
      },
      options.atlas_max_runs);
  for (const AtlasInterval& iv : a.atlas.intervals) {
    if (iv.feasible()) continue;
    if (!a.infeasible.empty() && a.infeasible.back().second + 1 == iv.lo)
      a.infeasible.back().second = iv.hi;
    else
      a.infeasible.push_back({iv.lo, iv.hi});
  }
  return a;
}

std::string RatioFlag(const BudgetRow& row) {
  return row.run.spec.ratio ? "--ratio " + row.run.spec.ratio->text
                            : fmt::format("--budget {}", row.run.result.budget);
}

// " --heuristic H --runtime R" where they differ from the commands' defaults.
std::string RunFlags(const ReportOptions& o) {
  std::string flags;
  if (o.heuristic->name != "DTR") flags += fmt::format(" --heuristic {}", o.heuristic->name);
  if (o.runtime != RuntimeKind::kV2EagerOptimized)
    flags += fmt::format(" --runtime {}", RuntimeName(o.runtime));
  return flags;
}

std::string CommandTrace(const ReportOptions& o) {
  return o.command_trace.empty() ? o.trace_source : o.command_trace;
}

// ExplainOom at each OOM row, as `dtrcheck explain --ratio R` runs it: a
// plain config (runtime, heuristic, budget; the overhead limit does not
// change a run that ran out of memory before reaching it).
std::vector<BudgetVerdict> ClassifyOomRows(const Trace& trace, const Baseline& baseline,
                                           const ReportModel& m, const ReportOptions& options) {
  StartStage(options, "verdicts");
  ClassifyOptions classify = ClassifyOptionsFor(options.verdict_options);
  classify.stored = options.stored;
  std::string explain_flags = ExplainFlagsFor(options.verdict_options);
  if (!options.store_path.empty()) explain_flags += " --store " + options.store_path;
  std::vector<BudgetVerdict> out;
  for (size_t i = 0; i < m.rows.size(); ++i)
    if (m.rows[i].run.result.outcome == Outcome::kOom) {
      out.emplace_back();
      out.back().run = i;
    }
  ParallelFor(
      out.size(), options.jobs,
      [&](size_t k) {
        BudgetVerdict& v = out[k];
        const BudgetRow& row = m.rows[v.run];
        ReplayConfig config;
        config.runtime = options.runtime;
        config.heuristic = options.heuristic;
        config.budget = row.run.result.budget;
        v.classification = ExplainOom(trace, baseline, config, classify);
        v.command = fmt::format("dtrcheck explain {} {}{}{}", CommandTrace(options), RatioFlag(row),
                                RunFlags(options), explain_flags);
      },
      [&](size_t done) {
        if (options.progress) options.progress(done, out.size());
      });
  return out;
}

// `dtrcheck diff` of every pair of neighbouring rows in different regimes.
std::vector<RegimeDivergence> CompareRegimes(const Trace& trace, const Baseline& baseline,
                                             const ReportModel& m, const ReportOptions& options) {
  StartStage(options, "divergence");
  std::vector<RegimeDivergence> out;
  for (size_t i = 0; i + 1 < m.rows.size(); ++i) {
    if (m.rows[i].regime == m.rows[i + 1].regime) continue;
    RegimeDivergence& d = out.emplace_back();
    d.run_a = i;
    d.run_b = i + 1;
    for (const ScanInversion& v : m.curve.analysis.inversions) {
      if (v.feasible_below == i) d.edge = RegimeEdge::kInversionLowerEdge;
      if (v.oom_to == i) d.edge = RegimeEdge::kInversionUpperEdge;
    }
  }
  ParallelFor(
      out.size(), options.jobs,
      [&](size_t k) {
        RegimeDivergence& d = out[k];
        const RunRecord& a = m.rows[d.run_a].run;
        const RunRecord& b = m.rows[d.run_b].run;
        d.comparison = CompareRuns(trace, baseline, a.spec, b.spec);
        std::string ratios = a.spec.ratio && b.spec.ratio
                                 ? a.spec.ratio->text + "," + b.spec.ratio->text
                                 : fmt::format("{},{}", a.result.budget, b.result.budget);
        d.command = fmt::format(
            "dtrcheck diff {} --ratios {}{}{}", CommandTrace(options), ratios, RunFlags(options),
            options.overhead_limit ? fmt::format(" --overhead-limit {}", *options.overhead_limit)
                                   : "");
      },
      [&](size_t done) {
        if (options.progress) options.progress(done, out.size());
      });
  return out;
}

}  // namespace

ClassifyOptions ClassifyOptionsFor(const VerdictOptions& v) {
  if (!(v.timeout_seconds > 0))
    throw Error(fmt::format("the Z3 time limit must be positive, got {} seconds", v.timeout_seconds));
  ClassifyOptions o;
  o.windows = v.z3 ? v.windows : 0;
  o.window_ops = v.window_ops;
  o.witness.use_z3 = v.z3;
  o.witness.limits.timeout_seconds = v.timeout_seconds;
  o.cut = v.cut;
  return o;
}

std::string ExplainFlagsFor(const VerdictOptions& v) {
  const std::string cut = v.cut ? "" : " --no-cut";
  if (!v.z3) return " --no-z3" + cut;
  const VerdictOptions defaults{.z3 = true};
  std::string flags;
  if (v.timeout_seconds != defaults.timeout_seconds)
    flags += fmt::format(" --timeout {}", v.timeout_seconds);
  if (v.windows != defaults.windows) flags += fmt::format(" --windows {}", v.windows);
  if (v.window_ops != defaults.window_ops) flags += fmt::format(" --window-ops {}", v.window_ops);
  return flags + cut;
}

std::string_view RegimeEdgeName(RegimeEdge e) {
  switch (e) {
    case RegimeEdge::kRegimeChange:
      return "regime change";
    case RegimeEdge::kInversionLowerEdge:
      return "last pass / first OOM";
    case RegimeEdge::kInversionUpperEdge:
      return "last OOM / first pass";
  }
  return "?";
}

CurveShape AnalyzeCurve(std::vector<BudgetRow>& rows, double cliff_factor) {
  CurveShape shape;
  for (const BudgetRow& row : rows) shape.points.push_back(MakeScanPoint(row.run));
  shape.analysis = AnalyzeScan(shape.points, cliff_factor);
  shape.oom_stretches = FindOomStretches(shape.points, shape.analysis);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].regime = shape.points[i].regime;
    rows[i].inversion.reset();
  }
  for (size_t k = 0; k < shape.analysis.inversions.size(); ++k) {
    const ScanInversion& v = shape.analysis.inversions[k];
    for (size_t i = v.oom_from; i <= v.oom_to; ++i) rows[i].inversion = k;
  }
  return shape;
}

ReportModel BuildReport(const Trace& trace, const ReportOptions& options) {
  if (options.ratios.empty()) throw Error("report: the ratio grid is empty");
  if (!options.heuristic) throw Error("report: no heuristic given");
  ReportModel m;
  Baseline baseline = ComputeBaseline(trace);
  m.trace = Facts(trace, options, baseline);
  m.heuristic = std::string(options.heuristic->name);
  m.runtime = std::string(RuntimeName(options.runtime));
  m.ratios_text = options.ratios_text;
  m.overhead_limit = options.overhead_limit;
  m.cliff_factor = options.cliff_factor;

  std::vector<RunSpec> specs;
  for (const Ratio& r : options.ratios) {
    RunSpec s;
    s.heuristic = options.heuristic;
    s.runtime = options.runtime;
    s.ratio = r;
    s.overhead_limit = options.overhead_limit;
    specs.push_back(s);
  }
  // The timeline's replay is not counted by the caller's progress: it is one run.
  StartStage(options, "grid");
  std::vector<RunRecord> runs = RunMany(trace, baseline, specs, options.jobs, options.progress);
  for (RunRecord& r : runs) {
    BudgetRow row;
    row.run = std::move(r);
    m.rows.push_back(std::move(row));
  }
  std::stable_sort(m.rows.begin(), m.rows.end(), [](const BudgetRow& a, const BudgetRow& b) {
    return a.run.result.budget < b.run.result.budget;
  });
  m.curve = AnalyzeCurve(m.rows, options.cliff_factor);

  // The timeline: the chosen run, else the first inversion (the most telling
  // OOM), else the first OOM, else the lowest budget.
  size_t selected = 0;
  std::string why = "lowest ratio";
  if (options.timeline_ratio) {
    bool found = false;
    for (size_t i = 0; i < m.rows.size() && !found; ++i)
      if (m.rows[i].run.spec.ratio->value == options.timeline_ratio->value) {
        selected = i;
        found = true;
      }
    if (!found)
      throw Error(fmt::format("report: --timeline-ratio {} is not on the grid {}",
                              options.timeline_ratio->text, options.ratios_text));
    why = "chosen with --timeline-ratio";
  } else if (!m.curve.analysis.inversions.empty()) {
    selected = m.curve.analysis.inversions.front().oom_from;
    why = "first feasibility inversion";
  } else {
    for (size_t i = 0; i < m.rows.size(); ++i)
      if (m.rows[i].run.result.outcome == Outcome::kOom) {
        selected = i;
        why = "first OOM run";
        break;
      }
  }
  m.timeline = BuildTimeline(trace, baseline, m.rows, selected, why, options.max_timeline_points);

  // One frontier per distinct failure state.
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const std::optional<OomContext>& oom = m.rows[i].run.result.oom;
    if (m.rows[i].run.result.outcome != Outcome::kOom || !oom) continue;
    auto same = std::find_if(groups.begin(), groups.end(), [&](const std::vector<size_t>& g) {
      return SameFailure(*m.rows[g.front()].run.result.oom, *oom);
    });
    if (same == groups.end())
      groups.push_back({i});
    else
      same->push_back(i);
  }
  if (options.runtime == RuntimeKind::kV1) {
    m.frontiers_skipped = "the frontier needs a RuntimeV2 runtime, not RuntimeV1";
  } else {
    StartStage(options, "frontiers");
    m.frontiers.emplace(groups.size());
    ParallelFor(
        groups.size(), options.jobs,
        [&](size_t k) {
          (*m.frontiers)[k] = BuildFrontier(trace, baseline, m.rows, std::move(groups[k]));
        },
        [&](size_t done) {
          if (options.progress) options.progress(done, groups.size());
        });
  }

  m.explain_flags = ExplainFlagsFor(options.verdict_options);
  if (!options.atlas)
    m.atlas_skipped = "turned off (--no-atlas)";
  else if (m.rows.front().run.result.budget == m.rows.back().run.result.budget)
    m.atlas_skipped = "the grid has a single budget";
  else
    m.atlas = BuildReportAtlas(trace, baseline, m, options);
  if (m.atlas && !m.atlas->atlas.stopped) {
    // As `scan --exact` reads the same grid off the same atlas.
    ReadBoundariesOffAtlas(m.atlas->atlas, m.curve.points, m.curve.analysis);
    m.curve.exact_inversions =
        FindExactInversions(m.atlas->atlas, m.curve.points, m.curve.analysis);
  }
  if (!options.verdicts)
    m.verdicts_skipped = "turned off (--no-proofs)";
  else if (options.runtime == RuntimeKind::kV1)
    m.verdicts_skipped = "explain needs a RuntimeV2 runtime, not RuntimeV1";
  else
    m.verdicts = ClassifyOomRows(trace, baseline, m, options);
  if (!options.divergence)
    m.divergence_skipped = "turned off (--no-divergence)";
  else
    m.divergence = CompareRegimes(trace, baseline, m, options);
  return m;
}

}  // namespace dtr
