#include "diagnose/report_model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "checker/farm/parallel.h"
#include "checker/proofs/memory_bound.h"
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

// The OOM rows to classify, in budget order: all of them, or at most `cap`:
// first the highest row of each OOM stretch (its verdict is the stretch's
// answer), then the rest from the highest budget down.
std::vector<size_t> VerdictRows(const ReportModel& m, size_t cap, int64_t evals_cap) {
  std::vector<size_t> order;
  for (const OomStretch& s : m.curve.oom_stretches)
    for (size_t i = s.to + 1; i-- > s.from;)
      if (m.rows[i].run.result.outcome == Outcome::kOom) {
        order.push_back(i);
        break;
      }
  for (size_t i = m.rows.size(); i-- > 0;)
    if (m.rows[i].run.result.outcome == Outcome::kOom &&
        std::find(order.begin(), order.end(), i) == order.end())
      order.push_back(i);
  if (cap > 0 && order.size() > cap) order.resize(cap);
  if (evals_cap > 0) {
    int64_t spent = 0;
    size_t keep = 0;
    for (; keep < order.size(); ++keep) {
      const int64_t cost = VerdictCost(m, m.rows[order[keep]]);
      if (keep > 0 && spent + cost > evals_cap) break;
      spent += cost;
    }
    order.resize(keep);
  }
  std::sort(order.begin(), order.end());
  return order;
}

// ExplainOom at each OOM row VerdictRows picks, as `dtrcheck explain --ratio R` runs it: a
// plain config (runtime, heuristic, budget; the overhead limit does not
// change a run that ran out of memory before reaching it).
std::vector<BudgetVerdict> ClassifyOomRows(const Trace& trace, const Baseline& baseline,
                                           const ReportModel& m, const ReportOptions& options) {
  StartStage(options, "verdicts");
  ClassifyOptions classify = ClassifyOptionsFor(options.verdict_options);
  classify.stored = options.stored;
  std::string explain_flags = ExplainFlagsFor(options.verdict_options);
  if (!options.store_path.empty()) explain_flags += " --store " + options.store_path;
  std::vector<size_t> chosen = VerdictRows(m, options.max_verdicts, options.verdict_evals);
  std::vector<BudgetVerdict> out(chosen.size());
  for (size_t k = 0; k < chosen.size(); ++k) out[k].run = chosen[k];
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
        d.comparison = CompareRuns(trace, baseline, a, b);
        std::string pair = a.spec.ratio && b.spec.ratio
                               ? "--ratios " + a.spec.ratio->text + "," + b.spec.ratio->text
                               : fmt::format("--budgets {},{}", a.result.budget, b.result.budget);
        d.command = fmt::format(
            "dtrcheck diff {} {}{}{}", CommandTrace(options), pair, RunFlags(options),
            options.overhead_limit ? fmt::format(" --overhead-limit {}", *options.overhead_limit)
                                   : "");
      },
      [&](size_t done) {
        if (options.progress) options.progress(done, out.size());
      });
  return out;
}

// Appends runs as rows (from the grid when `additions` is empty, else one
// addition each, in order) and keeps the rows in budget order.
void AddRows(ReportModel& m, std::vector<RunRecord> runs, const std::vector<GridAddition>& additions) {
  for (size_t k = 0; k < runs.size(); ++k) {
    BudgetRow row;
    row.run = std::move(runs[k]);
    if (!additions.empty()) {
      row.source = additions[k].source;
      row.source_reason = additions[k].reason;
    }
    m.rows.push_back(std::move(row));
  }
  std::stable_sort(m.rows.begin(), m.rows.end(), [](const BudgetRow& a, const BudgetRow& b) {
    return a.run.result.budget < b.run.result.budget;
  });
}

// The index of the interval of `atlas` holding `budget` (inside its range).
size_t IntervalIndex(const BudgetAtlas& atlas, int64_t budget) {
  auto it = std::upper_bound(atlas.intervals.begin(), atlas.intervals.end(), budget,
                             [](int64_t b, const AtlasInterval& iv) { return b < iv.lo; });
  return static_cast<size_t>(std::prev(it) - atlas.intervals.begin());
}

// As ReadBoundariesOffAtlas (diagnose/instability_scan.h), for the pairs of
// points that lie in one walked section, in two of its intervals.
void ReadBoundariesOffSections(const AtlasCoverage& c, const std::vector<ScanPoint>& points,
                               ScanAnalysis& analysis) {
  auto boundary = [&](size_t lower, size_t upper) -> std::optional<ScanBoundary> {
    std::optional<size_t> k = c.SectionAt(points[lower].budget);
    if (!k || k != c.SectionAt(points[upper].budget)) return std::nullopt;
    const BudgetAtlas& s = c.sections[*k];
    if (IntervalIndex(s, points[lower].budget) == IntervalIndex(s, points[upper].budget))
      return std::nullopt;
    return BoundaryFromAtlas(s, points[lower], points[upper]);
  };
  for (ScanCliff& cl : analysis.cliffs)
    if (std::optional<ScanBoundary> b = boundary(cl.lower, cl.upper)) cl.boundary = b;
  for (ScanInversion& v : analysis.inversions) {
    if (std::optional<ScanBoundary> b = boundary(v.feasible_below, v.oom_from)) v.lower_edge = b;
    if (std::optional<ScanBoundary> b = boundary(v.oom_to, v.feasible_above)) v.upper_edge = b;
  }
}

// The rows whose timelines are drawn, in budget order, with their roles;
// ReportModel::timelines says which. Sets m.timeline_selection.
std::vector<std::pair<size_t, std::string>> TimelineRuns(ReportModel& m,
                                                          const ReportOptions& options) {
  if (options.timeline_ratio) {
    for (size_t i = 0; i < m.rows.size(); ++i)
      if (m.rows[i].run.spec.ratio && m.rows[i].run.spec.ratio->value == options.timeline_ratio->value) {
        m.timeline_selection = "chosen with --timeline-ratio";
        return {{i, "chosen with --timeline-ratio"}};
      }
  }
  if (!m.curve.analysis.inversions.empty()) {
    const ScanInversion& v = m.curve.analysis.inversions.front();
    m.timeline_selection = "the first feasibility inversion: its last passing run below and its first OOM run";
    return {{v.feasible_below, "last pass below the inversion"}, {v.oom_from, "first OOM of the inversion"}};
  }
  for (size_t i = 0; i + 1 < m.rows.size(); ++i)
    if (m.rows[i].run.result.outcome == Outcome::kOom &&
        m.rows[i + 1].run.result.outcome == Outcome::kPass) {
      m.timeline_selection = "the lowest passing run with an OOM right below it, and that OOM";
      return {{i, "OOM right below the lowest pass"}, {i + 1, "lowest passing run"}};
    }
  for (size_t i = 0; i < m.rows.size(); ++i)
    if (m.rows[i].run.result.outcome == Outcome::kOom) {
      m.timeline_selection = "the first OOM run";
      return {{i, "first OOM run"}};
    }
  m.timeline_selection = "the lowest budget (no run ran out of memory)";
  return {{0, "lowest budget"}};
}

}  // namespace

void CheckTimelineRatio(const ReportOptions& options) {
  if (options.timeline_ratio &&
      std::none_of(options.ratios.begin(), options.ratios.end(),
                   [&](const Ratio& r) { return r.value == options.timeline_ratio->value; }))
    throw Error(fmt::format("report: --timeline-ratio {} is not on the grid {}",
                            options.timeline_ratio->text, options.ratios_text));
}

int64_t VerdictCost(const ReportModel& m, const BudgetRow& row) {
  return kReplaysPerVerdict * (row.run.result.heuristic_evals + m.trace.program_steps);
}

ReportCaps DefaultReportCaps(const Trace& trace) {
  // Calibrated on the public traces (docs/default_times.md): a verdict
  // makes about 40 replays (lower budgets, counterfactuals) and the
  // next-use policy; LSTM, the costliest (5,376 storages x 32,673 steps),
  // and TreeLSTM get 1 verdict, the Unrolled GAN 2; ResNet-32 and U-Net
  // every verdict.
  constexpr int64_t kVerdictWork = 250'000'000;
  ReportCaps c;
  c.replay_cost = std::max<int64_t>(1, static_cast<int64_t>(trace.storages.size()) *
                                           static_cast<int64_t>(trace.program.size()));
  const int64_t verdicts = std::max<int64_t>(1, kVerdictWork / c.replay_cost);
  c.verdicts = verdicts >= 1000 ? 0 : static_cast<size_t>(verdicts);  // 0: every OOM budget
  return c;
}

std::string DefaultReportRatios(const Trace& trace) {
  // As many rows as about kGridWork / (storages x steps) allow, in the finest
  // of the steps 0.01, 0.02, 0.05 that fits (0.05 at least).
  constexpr int64_t kGridWork = 2'500'000'000;
  const double floor = static_cast<double>(ComputeMemoryBound(trace).bytes) /
                       static_cast<double>(ComputeBaseline(trace).memory);
  const int lo = std::clamp(static_cast<int>(std::ceil(floor * 100)), 1, 95);  // hundredths
  const int64_t rows = kGridWork / DefaultReportCaps(trace).replay_cost;
  int step = 5;
  for (int s : {2, 1})
    if ((100 - lo) / s + 1 <= rows) step = s;
  return fmt::format("{}.{:02}:1.0:0.{:02}", lo / 100, lo % 100, step);
}

ClassifyOptions ClassifyOptionsFor(const VerdictOptions& v) {
  if (!(v.timeout_seconds >= 0))
    throw Error(fmt::format("the Z3 time limit must be 0 (none) or positive, got {} seconds",
                            v.timeout_seconds));
  ClassifyOptions o;
  o.windows = v.z3 ? v.windows : 0;
  o.window_ops = v.window_ops;
  o.witness.use_z3 = v.z3;
  o.witness.limits.timeout_seconds = v.timeout_seconds;
  o.witness.limits.work_limit = v.work_limit;
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
  if (v.work_limit != defaults.work_limit) flags += fmt::format(" --work-limit {}", v.work_limit);
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
  CheckTimelineRatio(options);

  // 1. The grid.
  std::vector<RunSpec> specs;
  for (const Ratio& r : options.ratios) {
    RunSpec s = RunSpecOf(options);
    s.ratio = r;
    specs.push_back(s);
  }
  StartStage(options, "grid");
  // The runs keep their trails, so that the divergences need not replay
  // them; at most about 200 MB of trails over the grid.
  const int64_t trail_decisions =
      options.divergence ? std::max<int64_t>(int64_t{1} << 16, (int64_t{1} << 23) / specs.size())
                         : 0;
  AddRows(m,
          RunMany(trace, baseline, specs, options.jobs, options.progress, nullptr, trail_decisions,
                  options.watch),
          {});

  // 2. The atlas over the grid's range, and 3. the rows chosen from it.
  if (!options.atlas) {
    m.atlas_skipped = "turned off (--no-atlas)";
  } else if (m.rows.front().run.result.budget == m.rows.back().run.result.budget) {
    m.atlas_skipped = "the grid has a single budget";
  } else {
    std::vector<BudgetRow> grid_rows = m.rows;
    CurveShape grid = AnalyzeCurve(grid_rows, options.cliff_factor);
    StartStage(options, "atlas");
    m.atlas = WalkAtlasWithin(trace, baseline, RunSpecOf(options), grid.points, options.atlas_cap,
                              options.jobs, options.progress);
    if (options.refine) {
      std::vector<GridAddition> additions =
          RefineGrid(*m.atlas, grid.points, grid.analysis, baseline.memory, options.cliff_factor,
                     options.refine_limits);
      if (!additions.empty()) {
        StartStage(options, "refine");
        std::vector<RunSpec> more;
        for (const GridAddition& a : additions) {
          RunSpec s = RunSpecOf(options);
          if (a.ratio)
            s.ratio = a.ratio;
          else
            s.budget = a.budget;
          more.push_back(s);
        }
        AddRows(m,
                RunMany(trace, baseline, more, options.jobs, options.progress, nullptr,
                        trail_decisions, options.watch),
                additions);
      }
    }
  }

  // 4. The curve over every row, its boundaries read off the atlas.
  m.curve = AnalyzeCurve(m.rows, options.cliff_factor);
  if (m.atlas) {
    ReadBoundariesOffSections(*m.atlas, m.curve.points, m.curve.analysis);
    m.curve.exact_inversions.emplace();
    for (size_t k = 0; k < m.atlas->sections.size(); ++k)
      for (const ExactInversion& v :
           FindExactInversions(m.atlas->sections[k], m.curve.points, m.curve.analysis))
        m.curve.exact_inversions->push_back({k, v});
  }
  // The regimes are final: only rows beside a row of another regime are
  // compared (8.), so the other rows' trails go now.
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const bool changes = (i > 0 && m.rows[i - 1].regime != m.rows[i].regime) ||
                         (i + 1 < m.rows.size() && m.rows[i + 1].regime != m.rows[i].regime);
    if (!changes) m.rows[i].run.trail.reset();
  }

  // 5. The timelines.
  std::vector<std::pair<size_t, std::string>> chosen = TimelineRuns(m, options);
  // The memory stack of the first passing one (else the first): each a
  // replay, made side by side.
  size_t stacked = 0;
  for (size_t k = 0; k < chosen.size(); ++k)
    if (m.rows[chosen[k].first].run.result.outcome == Outcome::kPass) {
      stacked = k;
      break;
    }
  m.timelines.resize(chosen.size());
  ParallelFor(chosen.size() + 1, options.jobs, [&](size_t k) {
    if (k == chosen.size()) {
      m.memory_stack = RecordMemoryStack(trace, baseline, m.rows[chosen[stacked].first].run.spec);
      m.memory_stack.run = chosen[stacked].first;
      return;
    }
    m.timelines[k] = RecordTimeline(trace, baseline, m.rows[chosen[k].first].run.spec,
                                    options.max_timeline_points);
    m.timelines[k].run = chosen[k].first;
    m.timelines[k].role = chosen[k].second;
  });

  // 6. One frontier per distinct failure state.
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

  // 7. Verdicts, 8. divergences.
  m.explain_flags = ExplainFlagsFor(options.verdict_options);
  if (!options.verdicts)
    m.verdicts_skipped = "turned off (--no-proofs)";
  else if (options.runtime == RuntimeKind::kV1)
    m.verdicts_skipped = "explain needs a RuntimeV2 runtime, not RuntimeV1";
  else
    m.verdicts = ClassifyOomRows(trace, baseline, m, options);
  m.max_verdicts = options.max_verdicts;
  m.verdict_evals = options.verdict_evals;
  if (m.verdicts)
    for (const BudgetRow& row : m.rows)
      m.verdicts_capped += row.run.result.outcome == Outcome::kOom;
  if (m.verdicts) m.verdicts_capped -= m.verdicts->size();
  if (!options.divergence)
    m.divergence_skipped = "turned off (--no-divergence)";
  else
    m.divergence = CompareRegimes(trace, baseline, m, options);
  for (BudgetRow& row : m.rows) row.run.trail.reset();  // used by 8. alone
  if (m.divergence && m.timelines.size() == 2)
    for (const RegimeDivergence& d : *m.divergence)
      if (d.run_a == m.timelines[0].run && d.run_b == m.timelines[1].run)
        m.timeline_divergence = d.comparison.first;
  m.headline = HeadlineOf(trace, m);
  return m;
}

BudgetReport BuildBudgetReport(const Trace& trace, const ReportOptions& options) {
  std::vector<const HeuristicSpec*> heuristics = options.heuristics;
  if (heuristics.empty()) heuristics.push_back(options.heuristic);
  BudgetReport report;
  for (const HeuristicSpec* h : heuristics) {
    ReportOptions o = options;
    o.heuristic = h;
    if (heuristics.size() > 1 && options.stage)
      o.stage = [&, h](const std::string& s) { options.stage(fmt::format("{}: {}", h->name, s)); };
    report.heuristics.push_back(BuildReport(trace, o));
  }
  return report;
}

}  // namespace dtr
