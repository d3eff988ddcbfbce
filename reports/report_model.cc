#include "reports/report_model.h"

#include <fmt/core.h>

#include <algorithm>

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

}  // namespace

CurveShape AnalyzeCurve(std::vector<BudgetRow>& rows, double cliff_factor) {
  CurveShape shape;
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
  return m;
}

}  // namespace dtr
