#include "diagnose/schedule_search.h"

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <tuple>

#include "checker/engine/engine.h"
#include "checker/farm/parallel.h"
#include "model/error.h"

namespace dtr {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kNoBudget = std::numeric_limits<int64_t>::max();
// Plans followed side by side: a fixed number, not the threads', so the
// search takes the same plans at any -j.
constexpr size_t kBatch = 2;
// States kept along a followed plan in the local search, to follow a change
// on from the last one before it (FollowOptions::snapshots).
constexpr int32_t kSnapshots = 32;

// A point of the plan space searched here.
struct PlanPoint {
  double fraction = 0;
  bool stop_at_retained = true;
  int32_t horizon = 0;
  double tilt = 0;
  int64_t small_bytes = -1;
  bool to_last_need = false;
  int64_t hold_bytes = 0;
  bool operator<(const PlanPoint& o) const {
    return std::tie(fraction, stop_at_retained, horizon, tilt, small_bytes, to_last_need,
                    hold_bytes) < std::tie(o.fraction, o.stop_at_retained, o.horizon, o.tilt,
                                           o.small_bytes, o.to_last_need, o.hold_bytes);
  }
  PlanPoint With(double f) const {
    PlanPoint p = *this;
    p.fraction = f;
    return p;
  }
};

class Searcher {
 public:
  Searcher(const Trace& trace, const Baseline& baseline, const ScheduleSearchOptions& o,
           const ScheduleSearchStatus& status)
      : trace_(trace), baseline_(baseline), o_(o), status_(status), facts_(trace) {
    for (const Storage& st : trace.storages) largest_storage_ = std::max(largest_storage_, st.size);
  }

  ScheduleSearch Run() {
    began_ = Clock::now();
    if (o_.seconds > 0)
      deadline_ = began_ + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(o_.seconds));
    // 1. The grid, most often best first (measured on the public traces).
    // Each fraction three ways: recomputation traced from retained storages,
    // from the constants, and from retained storages with the small storages
    // (at most 1/100 of the largest) retained whatever their cost.
    const int64_t small = largest_storage_ / 100;
    std::vector<PlanPoint> grid;
    for (double f : {0.3, 0.05, 0.1, 0.5, 0.2, 0.4, 0.02, 0.15, 0.03, 0.01, 0.005}) {
      grid.push_back({f, true, 0});
      grid.push_back({f, false, 0});
      grid.push_back({f, true, 0, 0, small});
      grid.push_back({f, false, 0, 0, -1, true});
    }
    TryAll(grid);
    // 2. Closer fractions around the best, tilts, then horizons.
    if (o_.refine && best_) {
      RefineFraction();
      // Thresholds lowered by the bytes already held (CostRule::hold_bytes),
      // with limits around what the best plan's peak holds beyond its pinned
      // storages and request, and longer first segments.
      if (!TimeUp()) {
        const PlanPoint at = best_point_;
        const double free = static_cast<double>(
            std::max<int64_t>(1, best_->peak_memory - best_->peak.pinned - best_->peak.request));
        std::vector<PlanPoint> held;
        for (double k : {1.0, 2.0})
          for (double r : {1.0, 1.5, 2.0}) {
            PlanPoint p = at.With(at.fraction * r);
            p.hold_bytes = static_cast<int64_t>(free * k);
            held.push_back(p);
          }
        if (TryAll(held)) {
          RefineFraction();
          if (best_point_.hold_bytes > 0) RefineHold();
        }
      }
      // Tilts and horizons together (they interact: a horizon retains
      // recomputed storages that a tilt spaces differently), then the
      // fraction again.
      const PlanPoint at = best_point_;
      std::vector<PlanPoint> shapes;
      for (int32_t h : {0, 4, 16, 64})
        for (double t : {0.0, 1.0, 2.0, 3.0}) {
          PlanPoint p = at;
          p.horizon = h;
          p.tilt = t;
          shapes.push_back(p);
        }
      TryAll(shapes);
      RefineFraction();
      // 3. Storage by storage, at the peak.
      // From the best plan, then from earlier bests while time is left
      // (first-improvement descent ends in different local optima).
      std::stable_sort(starts_.begin(), starts_.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 0; i < starts_.size() && i < 8 && !TimeUp(); ++i)
        LocalSearch(starts_[i].second);
    }
    out_.timed_out = timed_out_;
    out_.work = work_;
    out_.work_limited = work_limited_;
    if (best_) Verify();
    out_.seconds = Elapsed();
    return std::move(out_);
  }

 private:
  // A scan around the best plan, scaling one parameter by each of `ratios`,
  // repeated from each new best (the peak is neither monotone nor smooth in
  // them).
  template <typename Scale>
  void Refine(std::initializer_list<double> ratios, Scale scale) {
    for (bool improved = true; improved && !TimeUp();) {
      const PlanPoint at = best_point_;
      std::vector<PlanPoint> near;
      for (double r : ratios) near.push_back(scale(at, r));
      improved = TryAll(near, true);
    }
  }
  void RefineFraction() {
    Refine({0.93, 1.07, 0.85, 1.15, 0.75, 1.3, 0.6, 1.6},
           [](const PlanPoint& p, double r) { return p.With(p.fraction * r); });
  }
  // The held-bytes limit of the best plan (CostRule::hold_bytes).
  void RefineHold() {
    Refine({0.85, 1.18, 0.7, 1.4}, [](PlanPoint p, double r) {
      p.hold_bytes = static_cast<int64_t>(static_cast<double>(p.hold_bytes) * r);
      return p;
    });
  }

  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - began_).count(); }

  // True when the search should stop: out of time or work, or good enough.
  bool TimeUp() {
    if (deadline_ && Clock::now() >= *deadline_) timed_out_ = true;
    if (o_.max_work > 0 && work_ >= o_.max_work) work_limited_ = true;
    return timed_out_ || work_limited_ || (best_ && best_->peak_memory <= o_.good_enough);
  }

  // The computations each of `plans` plans followed side by side may
  // follow: its own limit, and a share of the work left (so that together
  // they stay within it).
  int64_t EventsAllowed(size_t plans) const {
    if (o_.max_work <= 0) return o_.max_events;
    const int64_t share = (o_.max_work - work_) / static_cast<int64_t>(std::max<size_t>(1, plans));
    return std::min(o_.max_events, std::max<int64_t>(1, share));
  }

  // Counts a followed plan's work (what it followed: not the steps before
  // the state it went on from); a plan cut by the work left marks the search
  // done.
  void Count(const FollowedPlan& f, int64_t allowed) {
    work_ += f.events - f.resumed_at;
    if (!f.completed && allowed < o_.max_events && f.events >= allowed) work_limited_ = true;
  }

  double OverheadOf(int64_t compute) const {
    return static_cast<double>(1 + compute) /
           static_cast<double>(std::max<int64_t>(1, baseline_.compute));
  }

  // Runs follow(i) for the n plans i, side by side: each result, or nothing
  // where the runtime refuses the plan's evictions (a state where simrd
  // stops with an assertion; its message in *refused).
  std::vector<std::optional<FollowedPlan>> FollowAll(
      size_t n, const std::function<FollowedPlan(size_t)>& follow,
      std::vector<std::string>* refused = nullptr) {
    std::vector<std::optional<FollowedPlan>> out(n);
    std::vector<std::string> why(n);
    ParallelFor(n, o_.jobs, [&](size_t i) {
      try {
        out[i] = follow(i);
      } catch (const SimrdAssertionError& e) {
        why[i] = e.what();
      }
    });
    if (refused) *refused = std::move(why);
    return out;
  }

  // Follows the plans at `points` not tried yet, in batches of kBatch side by
  // side, each batch with the options of its start (the work left, the best
  // peak as a cap), then takes the results in order. Stops after the first
  // batch in which a plan became the best if `first_improvement`. True if
  // one did.
  bool TryAll(const std::vector<PlanPoint>& points, bool first_improvement = false) {
    bool improved = false;
    std::vector<PlanPoint> left;
    for (const PlanPoint& p : points)
      if (!tried_.count(p)) left.push_back(p);
    for (size_t at = 0; at < left.size() && !TimeUp();) {
      std::vector<PlanPoint> batch;
      for (; at < left.size() && batch.size() < kBatch; ++at)
        if (!tried_.count(left[at])) {
          tried_[left[at]] = true;
          batch.push_back(left[at]);
        }
      std::vector<RetentionPlan> plans;
      for (const PlanPoint& p : batch)
        plans.push_back(PlanByRecomputeCost(trace_, facts_,
                                            {p.fraction, p.stop_at_retained, p.horizon, p.tilt,
                                             p.small_bytes, p.to_last_need, p.hold_bytes}));
      FollowOptions fo;
      fo.runtime = o_.runtime;
      fo.max_events = EventsAllowed(batch.size());
      fo.deadline = deadline_;
      // A plan cannot beat the best by going above it: stop it there.
      if (best_) fo.budget = best_->peak_memory;
      const Clock::time_point t0 = Clock::now();
      std::vector<std::string> refused;
      std::vector<std::optional<FollowedPlan>> followed = FollowAll(
          plans.size(), [&](size_t i) { return FollowRetentionPlan(trace_, facts_, plans[i], fo); },
          &refused);
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      for (size_t i = 0; i < batch.size(); ++i) {
        FollowedPlan f;
        if (followed[i])
          f = std::move(*followed[i]);
        else
          f.stopped = refused[i];
        improved |= Take(batch[i], plans[i], std::move(f), fo.max_events, seconds);
      }
      if (improved && first_improvement) break;
    }
    return improved;
  }

  // Records a followed plan; true if it became the best.
  bool Take(const PlanPoint& p, const RetentionPlan& plan, FollowedPlan f, int64_t allowed,
            double seconds) {
    PlanAttempt a;
    a.description = plan.description;
    a.completed = f.completed;
    a.stopped = f.stopped;
    a.peak = f.peak_memory;
    a.events = f.events;
    a.overhead = OverheadOf(f.compute);
    a.seconds = seconds;  // of its batch
    if (f.stopped == "time limit") timed_out_ = true;
    Count(f, allowed);
    bool taken = false;
    if (f.completed && o_.max_overhead && a.overhead > *o_.max_overhead) {
      a.stopped = fmt::format("overhead {:.2f} above the limit {}", a.overhead, *o_.max_overhead);
    } else if (f.completed && (!best_ || Better(f, *best_))) {
      best_ = std::move(f);
      best_plan_ = plan;
      best_point_ = p;
      starts_.push_back({best_->peak_memory, plan});
      taken = true;
    } else if (f.completed) {
      starts_.push_back({f.peak_memory, plan});  // ties the best: another start for step 3
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

  // Whether a followed plan beats another: a lower peak, or the same peak
  // with less compute (a lower overhead), then fewer computations.
  static bool Better(const FollowedPlan& a, const FollowedPlan& b) {
    return std::tie(a.peak_memory, a.compute, a.events) <
           std::tie(b.peak_memory, b.compute, b.events);
  }

  // A followed plan's rank: its peak, then how many program steps come
  // within 0.5% of it (fewer: closer to lowering it).
  struct Rank {
    int64_t peak = 0;
    int64_t near = 0;
    bool operator<(const Rank& o) const { return peak != o.peak ? peak < o.peak : near < o.near; }
  };
  static Rank RankOf(const FollowedPlan& f) {
    Rank r{f.peak_memory, 0};
    const int64_t near = f.peak_memory - f.peak_memory / 200;
    for (int64_t m : f.step_peaks) r.near += m >= near;
    return r;
  }

  // One storage's retention changed over some program steps.
  struct Move {
    StorageId s;
    int32_t first, last;
    bool retain;
    bool operator<(const Move& o) const {
      return std::tie(s, first, last, retain) < std::tie(o.s, o.first, o.last, o.retain);
    }
  };

  // Follows `plans` side by side with step peaks and snapshots, each stopped
  // above `cap` and all with the work left at the start; in order, each
  // result if it completed within the limits (a plan whose evictions the
  // runtime refuses is not a candidate). With `base`, plans[i] is base's
  // plan changed by moves[i], followed on from base's last snapshot before
  // the change (the same result as from the start, for less work).
  std::vector<std::optional<FollowedPlan>> FollowRanked(const std::vector<RetentionPlan>& plans,
                                                        int64_t cap,
                                                        const FollowedPlan* base = nullptr,
                                                        const std::vector<Move>* moves = nullptr) {
    const int64_t left = EventsAllowed(plans.size());
    std::vector<FollowOptions> fo(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) {
      fo[i].runtime = o_.runtime;
      fo[i].max_events = left;
      if (base) {
        const int64_t from = ResumePoint(*base, (*moves)[i].first);
        fo[i].max_events = std::min(o_.max_events, from + left);
      }
      fo[i].deadline = deadline_;
      fo[i].record_steps = true;
      fo[i].budget = cap;
      fo[i].snapshots = kSnapshots;
    }
    std::vector<std::optional<FollowedPlan>> out = FollowAll(plans.size(), [&](size_t i) {
      return base ? ResumeRetentionPlan(trace_, facts_, plans[i], *base, (*moves)[i].s,
                                        (*moves)[i].first, fo[i])
                  : FollowRetentionPlan(trace_, facts_, plans[i], fo[i]);
    });
    for (size_t i = 0; i < out.size(); ++i) {
      std::optional<FollowedPlan>& f = out[i];
      if (!f) continue;
      ++local_moves_;
      Count(*f, fo[i].max_events);
      if (f->stopped == "time limit") timed_out_ = true;
      if (!f->completed || (o_.max_overhead && OverheadOf(f->compute) > *o_.max_overhead))
        f.reset();
    }
    return out;
  }

  // The changes worth trying at the peak of `f`: stop retaining a storage the
  // plan holds there (drop it after its last use before the peak, recompute
  // it at its next use), largest first; or retain a storage that is being
  // recomputed there, from where the plan dropped it.
  std::vector<Move> MovesAtPeak(const FollowedPlan& f) const {
    const int32_t p = f.peak.program_step;
    std::vector<Move> moves;
    std::vector<StorageId> held = f.retained_at_peak;
    std::sort(held.begin(), held.end(), [&](StorageId a, StorageId b) {
      return trace_.storages[a].size > trace_.storages[b].size;
    });
    for (StorageId s : held) {
      if (trace_.storages[s].size == 0) continue;
      const std::vector<int32_t>& u = facts_.uses(s);
      auto it = std::upper_bound(u.begin(), u.end(), p);
      const int32_t first = it == u.begin() ? p : *(it - 1) + 1;
      const int32_t last = it == u.end() ? facts_.last_need(s) : *it - 1;
      if (last >= p) moves.push_back({s, std::min(first, p), last, false});
    }
    for (const auto& [s, dropped] : f.recomputed_at_peak)
      if (dropped >= 0 && dropped <= p && trace_.storages[s].size > 0)
        moves.push_back({s, dropped, p, true});
    return moves;
  }

  // Iterated first-improvement descent over single-storage changes at the
  // peak. When no change ranks better, the least bad one tried (at most 2%
  // above the peak) is taken as a kick, up to kMaxKicks in a row; changes
  // once tried are not tried again at the same place. The best plan met is
  // kept.
  void LocalSearch(const RetentionPlan& start) {
    constexpr int kMaxKicks = 4;
    std::optional<FollowedPlan> first = std::move(FollowRanked({start}, kNoBudget)[0]);
    if (!first) return;
    RetentionPlan plan = start;
    FollowedPlan cur = std::move(*first);
    Rank rank = RankOf(cur);
    RetentionPlan best_plan = plan;
    FollowedPlan best = cur;
    Rank best_rank = rank;
    const int64_t start_peak = cur.peak_memory;
    const size_t start_moves = local_moves_;
    std::map<Move, bool> tried;
    for (int kicks = 0; !TimeUp();) {
      std::optional<std::pair<RetentionPlan, FollowedPlan>> least_bad;
      bool moved = false;
      const std::vector<Move> moves = MovesAtPeak(cur);
      // Moves in batches of kBatch, taken in order: the first that ranks
      // better is taken; moves after it in its batch count as not tried.
      for (size_t at = 0; !moved && at < moves.size() && !TimeUp();) {
        std::vector<Move> batch;
        std::vector<RetentionPlan> nexts;
        for (; at < moves.size() && batch.size() < kBatch; ++at) {
          const Move& m = moves[at];
          if (tried.count(m)) continue;
          tried[m] = true;
          batch.push_back(m);
          nexts.push_back(plan);
          nexts.back().Override(m.s, m.first, m.last, m.retain);
        }
        if (batch.empty()) break;
        const int64_t cap = kicks < kMaxKicks ? cur.peak_memory + cur.peak_memory / 50 : rank.peak;
        std::vector<std::optional<FollowedPlan>> followed = FollowRanked(nexts, cap, &cur, &batch);
        for (size_t i = 0; i < batch.size(); ++i) {
          std::optional<FollowedPlan>& f = followed[i];
          if (!f) continue;
          if (RankOf(*f) < rank) {
            plan = std::move(nexts[i]);
            cur = std::move(*f);
            moved = true;
            for (size_t j = i + 1; j < batch.size(); ++j) tried.erase(batch[j]);
            break;
          }
          if (!least_bad || RankOf(*f) < RankOf(least_bad->second))
            least_bad.emplace(std::move(nexts[i]), std::move(*f));
        }
      }
      if (!moved) {
        if (!least_bad || kicks >= kMaxKicks) break;
        plan = std::move(least_bad->first);
        cur = std::move(least_bad->second);
        ++kicks;
      } else {
        kicks = 0;
      }
      rank = RankOf(cur);
      if (rank < best_rank) {
        best_plan = plan;
        best = cur;
        best_rank = rank;
      }
    }
    if (status_)
      status_(fmt::format(
          "local search from '{}': {} changes tried, {} kept; peak ratio {:.6f} -> {:.6f}",
          start.description, local_moves_ - start_moves, best_plan.override_count(),
          static_cast<double>(start_peak) / baseline_.memory,
          static_cast<double>(best.peak_memory) / baseline_.memory));
    if (Better(best, *best_)) {
      best_plan.description = fmt::format("{}, {} storage changes by local search",
                                          start.description, best_plan.override_count());
      best_plan_ = std::move(best_plan);
      best_ = std::move(best);
    }
  }

  void Verify() {
    PlannedSchedule s;
    s.description = best_plan_.description;
    s.plan = best_plan_;
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
  int64_t work_ = 0;  // computations followed
  bool work_limited_ = false;
  std::map<PlanPoint, bool> tried_;
  std::vector<std::pair<int64_t, RetentionPlan>> starts_;  // every best so far, with its peak
  size_t local_moves_ = 0;
  int64_t largest_storage_ = 0;
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
