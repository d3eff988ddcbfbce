#include "diagnose/schedule_search.h"

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <map>
#include <tuple>

#include "checker/stepwise_runtime.h"
#include "model/error.h"

namespace dtr {

namespace {

using Clock = std::chrono::steady_clock;

// A point of the plan space searched here.
struct PlanPoint {
  double fraction = 0;
  bool stop_at_retained = true;
  int32_t horizon = 0;
  bool operator<(const PlanPoint& o) const {
    return std::tie(fraction, stop_at_retained, horizon) <
           std::tie(o.fraction, o.stop_at_retained, o.horizon);
  }
};

class Searcher {
 public:
  Searcher(const Trace& trace, const Baseline& baseline, const ScheduleSearchOptions& o,
           const ScheduleSearchStatus& status)
      : trace_(trace), baseline_(baseline), o_(o), status_(status), facts_(trace) {}

  ScheduleSearch Run() {
    began_ = Clock::now();
    if (o_.seconds > 0)
      deadline_ = began_ + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(o_.seconds));
    // 1. The grid, most often best first (measured on the public traces).
    for (double f : {0.3, 0.05, 0.1, 0.2, 0.02, 0.5, 0.01, 0.005})
      for (bool stop : {true, false}) Try({f, stop, 0});
    // 2. Closer fractions around the best, then horizons.
    if (o_.refine && best_) {
      for (double r : {1.4, 1.15, 1.05}) {
        for (bool improved = true; improved && !TimeUp();) {
          const PlanPoint at = best_point_;
          improved = Try({at.fraction * r, at.stop_at_retained, at.horizon}) ||
                     Try({at.fraction / r, at.stop_at_retained, at.horizon});
        }
      }
      const PlanPoint at = best_point_;
      for (int32_t h : {1, 2, 4, 8, 16, 64}) Try({at.fraction, at.stop_at_retained, h});
    }
    out_.timed_out = timed_out_;
    if (best_) Verify();
    out_.seconds = Elapsed();
    return std::move(out_);
  }

 private:
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - began_).count(); }

  bool TimeUp() {
    if (deadline_ && Clock::now() >= *deadline_) timed_out_ = true;
    return timed_out_;
  }

  double OverheadOf(int64_t compute) const {
    return static_cast<double>(1 + compute) / static_cast<double>(std::max<int64_t>(1, baseline_.compute));
  }

  // Follows the plan at `p` (once); true if it became the best.
  bool Try(const PlanPoint& p) {
    if (tried_.count(p) || TimeUp()) return false;
    tried_[p] = true;
    RetentionPlan plan =
        PlanByRecomputeCost(trace_, facts_, p.fraction, p.stop_at_retained, p.horizon);
    FollowOptions fo;
    fo.eager = EagerEvictions(o_.runtime);
    fo.max_events = o_.max_events;
    fo.deadline = deadline_;
    // A plan cannot beat the best by going above it: stop it there.
    if (best_) fo.budget = best_->peak_memory;
    const Clock::time_point t0 = Clock::now();
    FollowedPlan f;
    try {
      f = FollowRetentionPlan(trace_, facts_, plan, fo);
    } catch (const Error& e) {  // a state where simrd stops with an assertion
      f.stopped = e.what();
    }
    PlanAttempt a;
    a.description = plan.description;
    a.completed = f.completed;
    a.stopped = f.stopped;
    a.peak = f.peak_memory;
    a.events = f.events;
    a.overhead = OverheadOf(f.compute);
    a.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (f.stopped == "time limit") timed_out_ = true;
    bool taken = false;
    if (f.completed && o_.max_overhead && a.overhead > *o_.max_overhead) {
      a.stopped = fmt::format("overhead {:.2f} above the limit {}", a.overhead, *o_.max_overhead);
    } else if (f.completed &&
               (!best_ || f.peak_memory < best_->peak_memory ||
                (f.peak_memory == best_->peak_memory && f.events < best_->events))) {
      best_ = std::move(f);
      best_plan_ = plan;
      best_point_ = p;
      taken = true;
    }
    if (status_)
      status_(fmt::format("{}: {}", a.description,
                          a.completed && a.stopped.empty()
                              ? fmt::format("peak ratio {:.6f}, overhead {:.2f}{}",
                                            static_cast<double>(a.peak) / baseline_.memory,
                                            a.overhead, taken ? " (best)" : "")
                              : a.stopped));
    out_.attempts.push_back(std::move(a));
    return taken;
  }

  void Verify() {
    PlannedSchedule s;
    s.description = best_plan_.description;
    s.peak = best_->peak_memory;
    s.script = std::move(best_->script);
    s.at_peak = best_->peak;
    s.check = CheckSchedule(trace_, s.peak, s.script, o_.runtime);
    if (!s.check.passed())
      throw Error(fmt::format(
          "internal error: the script of the plan '{}' fails the checker at its own peak {}: {}",
          s.description, s.peak, DescribeScheduleCheck(s.check)));
    s.overhead = Overhead(s.check.run.clock, baseline_.compute);
    out_.best = std::move(s);
  }

  const Trace& trace_;
  const Baseline& baseline_;
  const ScheduleSearchOptions& o_;
  const ScheduleSearchStatus& status_;
  const ProgramFacts facts_;
  Clock::time_point began_;
  std::optional<Clock::time_point> deadline_;
  bool timed_out_ = false;
  std::map<PlanPoint, bool> tried_;
  std::optional<FollowedPlan> best_;
  RetentionPlan best_plan_;
  PlanPoint best_point_;
  ScheduleSearch out_;
};

}  // namespace

ScheduleSearch SearchRetentionPlans(const Trace& trace, const Baseline& baseline,
                                    const ScheduleSearchOptions& options,
                                    const ScheduleSearchStatus& status) {
  if (options.runtime == RuntimeKind::kV1)
    throw Error("the schedule search needs a RuntimeV2 runtime, not RuntimeV1");
  return Searcher(trace, baseline, options, status).Run();
}

}  // namespace dtr
