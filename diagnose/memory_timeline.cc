#include "diagnose/memory_timeline.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "checker/engine/replay.h"
#include "model/error.h"

namespace dtr {

namespace {

// How many of each a timeline holds: every point and mark when the run has
// at most the limits, else the reduced ones.
struct TimelineShape {
  size_t point_limit = 0, mark_limit = 0;
  // Known only after a first pass; while unknown, everything is kept.
  std::optional<size_t> points, evictions, remats;
  int64_t events = 0;
  bool reduce_points() const { return points && *points > point_limit; }
  bool reduce_marks() const {
    return evictions && (*evictions > mark_limit || *remats > mark_limit);
  }
};

// Records a run's timeline as it happens. Without the counts of the run it
// keeps everything, up to `keep_at_most` of each kind (past that it only
// counts, and the caller replays with the counts known); with them it keeps
// per-bucket extremes and first marks as it goes, the same ones a reduction
// of everything would keep, so no run needs memory for all its computations.
class TimelineRecorder : public ReplayObserver {
 public:
  TimelineRecorder(const Trace& trace, const TimelineShape& shape, size_t keep_at_most)
      : trace_(trace), shape_(shape), keep_at_most_(keep_at_most) {
    if (shape_.reduce_points()) {
      buckets_ = shape_.point_limit / 2;
      NextBucket();
    }
    if (shape_.reduce_marks())
      width_ =
          std::max<int64_t>(1, (shape_.events + 1) / static_cast<int64_t>(shape_.mark_limit) + 1);
  }

  Flow OnComputation(const Computation& c) override {
    Point({c.event, c.program_step, c.clock, c.memory_usage, c.remat});
    if (c.remat) Remat({c.event, c.program_step, c.tensor, c.memory_usage});
    return Flow::kContinue;
  }
  Flow OnDecision(const DecisionPoint& d) override {
    Eviction({d.event, d.program_step, d.chosen, Size(d.chosen), d.memory_usage, true});
    return Flow::kContinue;
  }
  bool WantsScores() const override { return false; }
  Flow OnEagerEviction(const EagerEviction& e) override {
    Eviction({e.event, e.program_step, e.storage, Size(e.storage), 0, false});
    return Flow::kContinue;
  }

  // What the observer calls above record, in run order; also how a run kept
  // whole is reduced once its counts are known.
  void Point(const TimelinePoint& p) {
    const size_t i = point_count_++;
    if (buckets_ == 0) {
      Keep(points, p);
      return;
    }
    // The lowest and the highest point of each of `buckets_` ranges of
    // point indices [n*b/buckets, n*(b+1)/buckets), first of equals.
    while (i >= end_) {
      if (have_) Emit();
      NextBucket();
    }
    if (!have_) {
      lo_ = hi_ = {i, p};
      have_ = true;
      return;
    }
    if (p.memory < lo_.second.memory) lo_ = {i, p};
    if (p.memory > hi_.second.memory) hi_ = {i, p};
  }
  void Eviction(const TimelineEviction& e) {
    AddMark(evictions, e);
    ++eviction_count_;
  }
  void Remat(const TimelineRemat& r) {
    AddMark(remats, r);
    ++remat_count_;
  }

  // The points so far; REQUIRES: the run ended.
  void Finish() {
    if (buckets_ > 0 && have_) Emit();
  }
  // Whether some kind went past keep_at_most (then only the counts are right).
  bool overflowed() const { return overflowed_; }
  size_t point_count() const { return point_count_; }
  size_t eviction_count() const { return eviction_count_; }
  size_t remat_count() const { return remat_count_; }

  std::vector<TimelinePoint> points;
  std::vector<TimelineEviction> evictions;
  std::vector<TimelineRemat> remats;

 private:
  void NextBucket() {
    const size_t n = *shape_.points;
    end_ = n * ++bucket_ / buckets_;
  }
  void Emit() {
    const bool lo_first = lo_.first <= hi_.first;
    points.push_back(lo_first ? lo_.second : hi_.second);
    if (lo_.first != hi_.first) points.push_back(lo_first ? hi_.second : lo_.second);
    have_ = false;
  }
  // The first mark of each event range of width_ (all of them without).
  template <typename Mark>
  void AddMark(std::vector<Mark>& marks, const Mark& m) {
    if (width_ == 0) {
      Keep(marks, m);
    } else if (marks.empty() || m.event / width_ != marks.back().event / width_) {
      marks.push_back(m);
    }
  }
  template <typename T>
  void Keep(std::vector<T>& v, const T& x) {
    if (overflowed_) return;
    if (v.size() == keep_at_most_) {
      overflowed_ = true;
      points = {};
      evictions = {};
      remats = {};
      return;
    }
    v.push_back(x);
  }
  int64_t Size(StorageId s) const {
    return s >= 0 && static_cast<size_t>(s) < trace_.storages.size() ? trace_.storages[s].size : 0;
  }

  const Trace& trace_;
  const TimelineShape& shape_;
  size_t keep_at_most_;
  bool overflowed_ = false;
  size_t point_count_ = 0, eviction_count_ = 0, remat_count_ = 0;
  // Point reduction: bucket_ of buckets_, ending before point end_.
  size_t buckets_ = 0, bucket_ = 0, end_ = 0;
  bool have_ = false;
  std::pair<size_t, TimelinePoint> lo_, hi_;
  int64_t width_ = 0;  // mark reduction
};

}  // namespace

MemoryTimeline RecordTimeline(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                              int max_points, int max_marks, size_t keep_at_most) {
  TimelineShape shape;
  shape.point_limit = static_cast<size_t>(std::max(2, max_points));
  shape.mark_limit = static_cast<size_t>(std::max(1, max_marks));
  keep_at_most = std::max({keep_at_most, shape.point_limit, shape.mark_limit}) + 1;
  ReplayConfig config = ConfigFor(spec, baseline);
  auto replay = [&](TimelineRecorder& rec) {
    config.observer = &rec;
    RunResult r = Replay(trace, config);
    rec.Finish();
    return r;
  };
  auto first = std::make_unique<TimelineRecorder>(trace, shape, keep_at_most);
  RunResult r = replay(*first);
  MemoryTimeline t;
  t.budget = r.budget;
  t.outcome = r.outcome;
  t.events = r.events;
  t.program_steps = static_cast<int32_t>(trace.program.size());
  t.remat_events = static_cast<int64_t>(first->remat_count());
  t.heuristic_evictions = r.heuristic_evictions;
  t.eager_evictions = r.eager_evictions;
  t.oom = r.oom;
  shape.points = first->point_count();
  shape.evictions = first->eviction_count();
  shape.remats = first->remat_count();
  shape.events = r.events;
  t.reduced = shape.reduce_points();
  t.marks_reduced = shape.reduce_marks();
  if (!first->overflowed()) {
    // Everything was kept: reduce it as a second pass would, without replaying.
    TimelineRecorder reduce(trace, shape, keep_at_most);
    for (const TimelinePoint& p : first->points) reduce.Point(p);
    for (const TimelineEviction& e : first->evictions) reduce.Eviction(e);
    for (const TimelineRemat& m : first->remats) reduce.Remat(m);
    reduce.Finish();
    t.points = std::move(reduce.points);
    t.evictions = std::move(reduce.evictions);
    t.remats = std::move(reduce.remats);
    return t;
  }
  // Too long to keep whole: again, reducing as it goes (the replay is
  // deterministic, so the counts are this run's).
  first.reset();
  TimelineRecorder second(trace, shape, keep_at_most);
  RunResult again = replay(second);
  if (second.overflowed() || second.point_count() != *shape.points || again.events != r.events ||
      again.clock != r.clock)
    throw Error("the timeline's second replay differs from its first");
  t.points = std::move(second.points);
  t.evictions = std::move(second.evictions);
  t.remats = std::move(second.remats);
  return t;
}

}  // namespace dtr
