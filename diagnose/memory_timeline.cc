#include "diagnose/memory_timeline.h"

#include <algorithm>

#include "checker/replay.h"

namespace dtr {

namespace {

class TimelineRecorder : public ReplayObserver {
 public:
  explicit TimelineRecorder(const Trace& trace) : trace_(trace) {}

  Flow OnComputation(const Computation& c) override {
    points.push_back({c.event, c.program_step, c.clock, c.memory_usage, c.remat});
    if (c.remat) remats.push_back({c.event, c.program_step, c.tensor, c.memory_usage});
    return Flow::kContinue;
  }
  Flow OnDecision(const DecisionPoint& d) override {
    evictions.push_back({d.event, d.program_step, d.chosen, Size(d.chosen), d.memory_usage, true});
    return Flow::kContinue;
  }
  bool WantsScores() const override { return false; }
  Flow OnEagerEviction(const EagerEviction& e) override {
    evictions.push_back({e.event, e.program_step, e.storage, Size(e.storage), 0, false});
    return Flow::kContinue;
  }

  std::vector<TimelinePoint> points;
  std::vector<TimelineEviction> evictions;
  std::vector<TimelineRemat> remats;

 private:
  int64_t Size(StorageId s) const {
    return s >= 0 && static_cast<size_t>(s) < trace_.storages.size() ? trace_.storages[s].size : 0;
  }
  const Trace& trace_;
};

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

// The first mark of each of `buckets` event ranges over [0, events].
template <typename Mark>
std::vector<Mark> ReduceMarks(const std::vector<Mark>& marks, int64_t events, size_t buckets) {
  std::vector<Mark> out;
  const int64_t width = std::max<int64_t>(1, (events + 1) / static_cast<int64_t>(buckets) + 1);
  for (const Mark& m : marks)
    if (out.empty() || m.event / width != out.back().event / width) out.push_back(m);
  return out;
}

}  // namespace

MemoryTimeline RecordTimeline(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                              int max_points, int max_marks) {
  TimelineRecorder rec(trace);
  ReplayConfig config = ConfigFor(spec, baseline);
  config.observer = &rec;
  RunResult r = Replay(trace, config);
  MemoryTimeline t;
  t.budget = r.budget;
  t.outcome = r.outcome;
  t.events = r.events;
  t.program_steps = static_cast<int32_t>(trace.program.size());
  t.remat_events = static_cast<int64_t>(rec.remats.size());
  t.heuristic_evictions = r.heuristic_evictions;
  t.eager_evictions = r.eager_evictions;
  t.oom = r.oom;
  const size_t point_limit = static_cast<size_t>(std::max(2, max_points));
  if (rec.points.size() > point_limit) {
    t.reduced = true;
    t.points = ReducePoints(rec.points, point_limit / 2);
  } else {
    t.points = std::move(rec.points);
  }
  const size_t mark_limit = static_cast<size_t>(std::max(1, max_marks));
  if (rec.evictions.size() > mark_limit || rec.remats.size() > mark_limit) {
    t.marks_reduced = true;
    t.evictions = ReduceMarks(rec.evictions, r.events, mark_limit);
    t.remats = ReduceMarks(rec.remats, r.events, mark_limit);
  } else {
    t.evictions = std::move(rec.evictions);
    t.remats = std::move(rec.remats);
  }
  return t;
}

}  // namespace dtr
