#include "reports/report_model.h"

#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "diagnose/parallel.h"
#include "model/error.h"
#include "reports/instability_report.h"
#include "reports/proof_report.h"
#include "reports/run_report.h"

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
  void OnComputation(const Computation& c) override {
    points.push_back({c.event, c.clock, c.memory_usage, c.remat});
  }
  void OnDecision(const DecisionPoint& d) override { decisions.push_back(d.event); }

  std::vector<TimelinePoint> points;
  std::vector<int64_t> decisions;
};

// Follows which storages are material, to know the state at an OOM: a
// computation makes all its operator's output storages material (simrd's
// _compute()), a heuristic or eager eviction makes one immaterial.
class MaterialTracker : public ReplayObserver {
 public:
  explicit MaterialTracker(const Trace& trace)
      : trace_(trace), material(trace.storages.size(), 0) {}
  void OnComputation(const Computation& c) override {
    const Operator& op = trace_.op_of(c.tensor);
    for (int32_t i = 0; i < op.num_outputs; ++i)
      material[trace_.tensors[op.first_output + i].storage] = 1;
  }
  void OnDecision(const DecisionPoint& d) override { material[d.chosen] = 0; }
  void OnEagerEviction(const EagerEviction& e) override { material[e.storage] = 0; }

 private:
  const Trace& trace_;

 public:
  std::vector<uint8_t> material;
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

OomFrontier BuildFrontier(const Trace& trace, const Baseline& baseline,
                          const std::vector<BudgetRow>& rows, std::vector<size_t> runs) {
  OomFrontier f;
  f.runs = std::move(runs);
  const BudgetRow& row = rows[f.runs.front()];
  for (size_t i : f.runs) {
    std::pair<int64_t, int64_t> span{rows[i].run.result.budget_lo, rows[i].run.result.budget_hi};
    if (f.budget_intervals.empty() || f.budget_intervals.back() != span)
      f.budget_intervals.push_back(span);
  }
  MaterialTracker tracker(trace);
  RunResult r = ReplayObserved(trace, baseline, row.run.spec, &tracker);
  if (!r.oom) throw Error("internal: an OOM run did not OOM when replayed again");
  f.oom = *r.oom;
  // Pins happen at kPin steps (constants right after their creation, the
  // remaining names at the end); those before the failing step hold.
  std::vector<uint8_t> pinned(trace.storages.size(), 0);
  for (int32_t i = 0; i < f.oom.program_step; ++i)
    if (trace.program[i].kind == StepKind::kPin)
      pinned[trace.tensors[trace.program[i].target].storage] = 1;
  for (size_t s = 0; s < pinned.size(); ++s)
    if (pinned[s] && tracker.material[s]) f.pinned_bytes += trace.storages[s].size;
  std::vector<uint8_t> counted(trace.storages.size(), 0);
  for (size_t k = 0; k < f.oom.frames.size(); ++k) {
    const Tensor& t = trace.tensors[f.oom.frames[k]];
    const Operator& op = trace.ops[t.op];
    ReportFrame frame;
    frame.depth = static_cast<int>(k);
    frame.tensor = t.name;
    frame.op = op.name;
    frame.output_size = op.total_size;
    std::vector<StorageId> seen;
    for (TensorId a : op.args) {
      StorageId s = trace.tensors[a].storage;
      if (std::find(seen.begin(), seen.end(), s) != seen.end())
        continue;  // duplicates lock one storage
      seen.push_back(s);
      FrontierArg arg;
      arg.tensor = trace.tensors[a].name;
      arg.storage_size = trace.storages[s].size;
      if (!tracker.material[s]) {
        arg.state = "evicted";
      } else if (pinned[s]) {
        arg.state = "pinned";
      } else if (counted[s]) {
        arg.state = "held-above";
      } else {
        arg.state = "locked";
        counted[s] = 1;
        frame.locked_bytes += arg.storage_size;
      }
      frame.args.push_back(std::move(arg));
    }
    f.frame_locked_bytes += frame.locked_bytes;
    f.frames.push_back(std::move(frame));
  }
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

// The lines of `text` that start (after spaces) with one of `prefixes`,
// trimmed and joined with "; ".
std::string PickLines(const std::string& text, std::initializer_list<const char*> prefixes) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    std::string trimmed = line.substr(b);
    for (const char* p : prefixes)
      if (trimmed.rfind(p, 0) == 0) {
        out += (out.empty() ? "" : "; ") + trimmed;
        break;
      }
  }
  return out;
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
    if (m.rows[i].run.result.outcome == Outcome::kOom) out.push_back({.run = i});
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
        const Classification& c = v.classification;
        v.verdict = std::string(VerdictName(c.verdict));
        v.certificate_checked =
            c.verdict == Verdict::kInherent ||
            ((c.verdict == Verdict::kPolicyInduced) && c.witness_search.witness &&
             c.witness_search.witness->check.passed());
        ProofHeader h;
        h.log = m.trace.name;
        h.baseline = baseline;
        h.heuristic = std::string(options.heuristic->name);
        h.runtime = options.runtime;
        h.ratio = row.run.spec.ratio;
        h.budget = row.run.result.budget;
        std::ostringstream text;
        PrintVerdictText(text, trace, h, c, false);
        v.text = text.str();
        v.certificate = PickLines(v.text, {"certificate:", "schedule checker"});
        v.command = fmt::format("dtrcheck explain {} {}{}{}", CommandTrace(options), RatioFlag(row),
                                RunFlags(options), explain_flags);
      },
      [&](size_t done) {
        if (options.progress) options.progress(done, out.size());
      });
  return out;
}

std::string StatsLine(const EvictionStats& s) {
  return fmt::format("{} evictions of {} storages ({:.2f} per storage)", s.evictions, s.distinct,
                     s.per_storage);
}

std::string DivergenceSummary(const Trace& trace, const RunComparison& c) {
  const FirstDivergence& f = c.first;
  std::string first;
  switch (f.kind) {
    case DivergenceKind::kNone:
      first = "no divergence (same decisions, same outcome)";
      break;
    case DivergenceKind::kExtraDecision: {
      const DecisionPoint& d = f.in == 'a' ? *f.a : *f.b;
      first = fmt::format(
          "decision {} exists only in run {} (event {}: {} in use + {} requested for {} > its "
          "budget, fits the other's)",
          f.index, f.in, d.event, d.memory_usage, d.request, trace.tensors[d.tensor].name);
      break;
    }
    case DivergenceKind::kRankedDifferently:
      first = fmt::format("decision {} (event {}) evicted {} in run a, {} in run b", f.index,
                          f.a->event, trace.tensors[trace.storages[f.a->chosen].root].name,
                          trace.tensors[trace.storages[f.b->chosen].root].name);
      break;
    case DivergenceKind::kRunEnded:
      first = fmt::format("run {} ended ({}) after {} identical decisions", f.in,
                          OutcomeName(f.in == 'a' ? c.a.outcome : c.b.outcome), f.index);
      break;
  }
  std::string why;
  if (c.first_term_flip && c.first_term_flip->flip) {
    const RankFlip& k = *c.first_term_flip->flip;
    std::string sets;
    for (const std::vector<ScoreTerm>& set : k.flipping_terms) {
      std::string one;
      for (ScoreTerm t : set) one += (one.empty() ? "" : "+") + std::string(ScoreTermName(t));
      sets += (sets.empty() ? "" : " or ") + one;
    }
    why = fmt::format("; first choice decided by the scores: a's decision {} / b's {}, {}",
                      c.first_term_flip->a.index, c.first_term_flip->b.index,
                      sets.empty() ? std::string("no change of terms reverses the order")
                                   : "the order flips with the " + sets + " term alone");
  }
  return fmt::format(
      "{}; from there on, {} of the {} decisions ({} in run a, {} in run b) have no "
      "same-choice partner in the other run{}; all evictions: a {}, b {}",
      first, c.after.differing(), c.after.after_a + c.after.after_b, c.after.after_a,
      c.after.after_b, why, StatsLine(c.a.all), StatsLine(c.b.all));
}

// `dtrcheck diff` of every pair of neighbouring rows in different regimes.
std::vector<RegimeDivergence> CompareRegimes(const Trace& trace, const Baseline& baseline,
                                             const ReportModel& m, const ReportOptions& options) {
  StartStage(options, "divergence");
  std::vector<RegimeDivergence> out;
  for (size_t i = 0; i + 1 < m.rows.size(); ++i) {
    if (m.rows[i].regime == m.rows[i + 1].regime) continue;
    RegimeDivergence d;
    d.run_a = i;
    d.run_b = i + 1;
    const Outcome a = m.rows[i].run.result.outcome, b = m.rows[i + 1].run.result.outcome;
    d.edge = "regime change";
    if (a == Outcome::kPass && b == Outcome::kOom && m.rows[i + 1].inversion)
      d.edge = "last pass / first OOM";
    for (const OomBand& band : m.curve.oom_bands)
      if (band.last_run == i && band.feasible_below && band.feasible_above && b == Outcome::kPass)
        d.edge = "last OOM / first pass";
    out.push_back(std::move(d));
  }
  TraceSummary summary{m.trace.name, baseline};
  ParallelFor(
      out.size(), options.jobs,
      [&](size_t k) {
        RegimeDivergence& d = out[k];
        const RunRecord& a = m.rows[d.run_a].run;
        const RunRecord& b = m.rows[d.run_b].run;
        d.comparison = CompareRuns(trace, baseline, a.spec, b.spec);
        d.first_divergent_decision = d.comparison.first.index;
        d.summary = DivergenceSummary(trace, d.comparison);
        std::ostringstream text;
        PrintDiffText(text, summary, trace, d.comparison);
        d.text = text.str();
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
    throw Error(fmt::format("--timeout must be positive, got {}", v.timeout_seconds));
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

CurveShape AnalyzeCurve(std::vector<BudgetRow>& rows, double cliff_factor) {
  CurveShape shape;
  // Regimes exactly as `dtrcheck scan` groups its grid points.
  std::vector<ScanPoint> points;
  for (const BudgetRow& row : rows) points.push_back(MakeScanPoint(row.run));
  shape.regimes = AnalyzeScan(points, cliff_factor).regimes;
  for (size_t i = 0; i < rows.size(); ++i) rows[i].regime = points[i].regime;
  auto passes = [&](size_t i) { return rows[i].run.result.outcome == Outcome::kPass; };
  auto ooms = [&](size_t i) { return rows[i].run.result.outcome == Outcome::kOom; };
  bool feasible_so_far = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].inversion = ooms(i) && feasible_so_far;
    if (rows[i].inversion) shape.inversions.push_back(i);
    feasible_so_far |= passes(i);
  }
  for (size_t i = 0; i < rows.size();) {
    if (!ooms(i)) {
      ++i;
      continue;
    }
    OomBand band;
    band.first_run = i;
    while (i < rows.size() && ooms(i)) ++i;
    band.last_run = i - 1;
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (size_t k = band.first_run; k <= band.last_run; ++k)
      spans.push_back({rows[k].run.result.budget_lo, rows[k].run.result.budget_hi});
    std::sort(spans.begin(), spans.end());
    for (const auto& s : spans) {
      if (!band.known_oom.empty() && s.first <= band.known_oom.back().second + 1)
        band.known_oom.back().second = std::max(band.known_oom.back().second, s.second);
      else
        band.known_oom.push_back(s);
    }
    for (size_t k = 0; k < band.first_run; ++k) band.feasible_below |= passes(k);
    for (size_t k = band.last_run + 1; k < rows.size(); ++k) band.feasible_above |= passes(k);
    if (band.first_run > 0 && passes(band.first_run - 1))
      band.exact_lower_edge =
          rows[band.first_run - 1].run.result.budget_hi + 1 == band.known_oom.front().first;
    if (band.last_run + 1 < rows.size() && passes(band.last_run + 1))
      band.exact_upper_edge =
          band.known_oom.back().second + 1 == rows[band.last_run + 1].run.result.budget_lo;
    shape.oom_bands.push_back(std::move(band));
  }
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    if (!passes(i) || !passes(i + 1)) continue;
    double a = rows[i].run.overhead, b = rows[i + 1].run.overhead;
    double factor = std::max(a, b) / std::min(a, b);
    if (factor >= cliff_factor) shape.cliffs.push_back({i, i + 1, factor});
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
  // Runs to come after the sweep (timeline, frontiers) are counted by the
  // caller's progress only as the sweep; they are few and short.
  StartStage(options, "grid");
  std::vector<RunRecord> runs = RunMany(trace, baseline, specs, options.jobs, options.progress);
  for (RunRecord& r : runs) {
    BudgetRow row;
    row.run = std::move(r);
    const RunResult& res = row.run.result;
    if (res.distinct_evicted > 0)
      row.evictions_per_evicted_storage =
          static_cast<double>(res.evictions()) / res.distinct_evicted;
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
  } else if (!m.curve.inversions.empty()) {
    selected = m.curve.inversions.front();
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
  for (std::vector<size_t>& g : groups)
    m.frontiers.push_back(BuildFrontier(trace, baseline, m.rows, std::move(g)));

  m.explain_flags = ExplainFlagsFor(options.verdict_options);
  if (!options.atlas)
    m.atlas_skipped = "turned off (--no-atlas)";
  else if (m.rows.front().run.result.budget == m.rows.back().run.result.budget)
    m.atlas_skipped = "the grid has a single budget";
  else
    m.atlas = BuildReportAtlas(trace, baseline, m, options);
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
