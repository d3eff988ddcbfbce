// The walk: each worker owns one "walk", a cursor moving up through a range
// [cursor, end]. A worker replays at `cursor`, records the run's interval
// clipped to `end`, and moves the cursor past it. A worker whose walk is done
// steals the upper half of the walk expected to need the most replays (by the
// bytes per replay seen so far) by lowering that walk's `end`, never below its
// cursor + 1, so the owner's replay in flight stays inside its own walk. A
// steal can cost one replay (the run at the seam may be the owner's last run
// again), so a walk is only split when it still expects kMinReplaysToSteal
// replays; an idle worker waits until some walk does or all are done. All walk
// bookkeeping happens under one mutex; replays run outside it.
//
// Invariant: the recorded intervals (a journal's finished ones included) and
// the open walks [cursor, end] together cover [lo, hi] exactly once; a resumed
// walk starts with one open walk per gap between finished intervals. A steal can cut one run in two at the seam; both
// pieces carry the same run_lo/run_hi and are merged at the end.
#include "checker/budget_atlas.h"

#include <fmt/core.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "model/error.h"

namespace dtr {

namespace {

constexpr double kMinReplaysToSteal = 4;

struct Walk {
  int64_t cursor = 0, end = 0;  // budgets left: [cursor, end]; done when cursor > end
  bool owned = false;
  int64_t covered = 0;  // bytes recorded by this walk
  size_t runs = 0;      // replays done by this walk
};

AtlasInterval IntervalOf(const RunResult& r, double overhead, int64_t lo, int64_t hi) {
  AtlasInterval iv;
  iv.lo = lo;
  iv.hi = hi;
  iv.run_lo = r.budget_lo;
  iv.run_hi = r.budget_hi;
  iv.behaviour = {r.outcome, r.clock, r.heuristic_evictions, r.evictions(), r.distinct_evicted};
  iv.overhead = overhead;
  iv.remat_compute = r.remat_compute;
  iv.heuristic_evals = r.heuristic_evals;
  iv.distinct_heuristic_evicted = r.distinct_heuristic_evicted;
  iv.evictions_per_evicted = r.distinct_evicted > 0 ? static_cast<double>(r.evictions()) / r.distinct_evicted : 0;
  return iv;
}

bool SameRun(const AtlasInterval& a, const AtlasInterval& b) {
  return a.run_lo == b.run_lo && a.run_hi == b.run_hi;
}

}  // namespace

AtlasSummary SummarizeAtlas(const std::vector<AtlasInterval>& intervals) {
  AtlasSummary s;
  s.intervals = intervals.size();
  std::set<AtlasBehaviour> behaviours;
  std::set<std::pair<Outcome, int64_t>> overheads;
  for (size_t i = 0; i < intervals.size(); ++i) {
    const AtlasInterval& iv = intervals[i];
    behaviours.insert(iv.behaviour);
    overheads.insert({iv.behaviour.outcome, iv.behaviour.clock});
    if (iv.feasible()) {
      s.feasible_width += iv.width();
      if (!s.smallest_feasible) s.smallest_feasible = iv.lo;
    } else {
      s.infeasible_width += iv.width();
      s.largest_infeasible = iv.hi;
      if (iv.behaviour.outcome == Outcome::kOom) s.largest_oom = iv.hi;
    }
    if (!s.bands.empty() && intervals[s.bands.back().last].behaviour == iv.behaviour) {
      s.bands.back().hi = iv.hi;
      s.bands.back().last = i;
    } else {
      s.bands.push_back({iv.lo, iv.hi, i, i});
    }
  }
  s.distinct_behaviours = behaviours.size();
  s.distinct_overheads = overheads.size();
  // Holes: infeasible runs bounded by feasible intervals on both sides.
  for (size_t i = 0; i < intervals.size();) {
    if (intervals[i].feasible()) {
      ++i;
      continue;
    }
    size_t j = i;
    FeasibilityHole h{intervals[i].lo, intervals[i].hi, i, i};
    for (; j < intervals.size() && !intervals[j].feasible(); ++j) {
      h.hi = intervals[j].hi;
      h.last = j;
      h.has_oom |= intervals[j].behaviour.outcome == Outcome::kOom;
      h.has_thrash |= intervals[j].behaviour.outcome == Outcome::kThrash;
    }
    if (i > 0 && j < intervals.size()) s.holes.push_back(h);
    i = j;
  }
  return s;
}

BudgetAtlas BuildAtlas(const Trace& trace, const Baseline& baseline, const RunSpec& spec, int64_t lo_bytes,
                       int64_t hi_bytes, int jobs, const AtlasProgressFn& progress, size_t max_runs,
                       const AtlasJournal* journal) {
  if (lo_bytes < 0 || hi_bytes < lo_bytes)
    throw Error(fmt::format("an atlas needs 0 <= lo <= hi, got budgets [{}, {}]", lo_bytes, hi_bytes));
  if (hi_bytes == kInfiniteBudget) throw Error("an atlas range must end below the infinite budget");
  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // More workers than bytes would only steal single bytes from each other.
  jobs = static_cast<int>(std::min<int64_t>(jobs, hi_bytes - lo_bytes + 1));

  std::mutex mu;
  std::condition_variable changed;  // a walk moved, ended or failed
  std::vector<Walk> walks;
  std::vector<AtlasInterval> found;
  int64_t covered = 0;
  size_t runs = 0;
  if (journal) found = journal->finished;
  std::sort(found.begin(), found.end(), [](const AtlasInterval& a, const AtlasInterval& b) { return a.lo < b.lo; });
  int64_t gap_from = lo_bytes;  // the open walks: the gaps between finished intervals
  for (const AtlasInterval& iv : found) {
    if (iv.lo < gap_from || iv.hi < iv.lo || iv.hi > hi_bytes)
      throw Error(fmt::format("a finished atlas interval [{}, {}] is outside the range [{}, {}] or overlaps another",
                              iv.lo, iv.hi, lo_bytes, hi_bytes));
    if (gap_from < iv.lo) walks.push_back({gap_from, iv.lo - 1, false});
    gap_from = iv.hi + 1;
    covered += iv.width();
    ++runs;
  }
  if (gap_from <= hi_bytes) walks.push_back({gap_from, hi_bytes, false});
  const size_t resumed = runs;
  std::exception_ptr failure;
  bool stopped = false;  // max_runs reached
  const int64_t total = hi_bytes - lo_bytes + 1;

  // Under `mu`: an unowned walk with budgets left, or a new one stolen from
  // the owned walk expected to need the most replays; -1 if there is none.
  auto take_walk = [&]() -> int {
    for (size_t w = 0; w < walks.size(); ++w)
      if (!walks[w].owned && walks[w].cursor <= walks[w].end) return static_cast<int>(w);
    int victim = -1;
    double most = 0;
    for (size_t w = 0; w < walks.size(); ++w) {
      const Walk& v = walks[w];
      int64_t left = v.end - v.cursor + 1;
      if (!v.owned || left < 2) continue;  // a walk needs two budgets left to give one away
      // Expected replays left, at this walk's density, else the overall one,
      // else (nothing measured yet) assume it is worth splitting.
      double expected = v.runs > 0   ? static_cast<double>(left) * v.runs / v.covered
                        : runs > 0   ? static_cast<double>(left) * runs / covered
                                     : kMinReplaysToSteal;
      if (expected >= kMinReplaysToSteal && expected > most) {
        most = expected;
        victim = static_cast<int>(w);
      }
    }
    if (victim < 0) return -1;
    Walk& v = walks[victim];
    int64_t mid = v.cursor + 1 + (v.end - v.cursor) / 2;  // > cursor: the owner's replay stays its own
    Walk stolen{mid, v.end, false, 0, 0};
    v.end = mid - 1;
    walks.push_back(stolen);  // invalidates v
    return static_cast<int>(walks.size() - 1);
  };
  auto all_done = [&] {
    for (const Walk& w : walks)
      if (w.cursor <= w.end) return false;
    return true;
  };

  auto worker = [&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      if (failure || stopped || all_done()) {
        changed.notify_all();
        return;
      }
      int w = take_walk();
      if (w < 0) {
        changed.wait(lock);
        continue;
      }
      walks[w].owned = true;
      while (walks[w].cursor <= walks[w].end) {
        RunSpec s = spec;
        s.ratio.reset();
        s.budget = walks[w].cursor;
        lock.unlock();
        RunRecord rec;
        try {
          rec = RunOne(trace, baseline, s);
          if (rec.result.budget_lo > *s.budget || rec.result.budget_hi < *s.budget)
            throw Error(fmt::format("replay at budget {} reported the interval [{}, {}], which misses it", *s.budget,
                                    rec.result.budget_lo, rec.result.budget_hi));
        } catch (...) {
          lock.lock();
          if (!failure) failure = std::current_exception();
          changed.notify_all();
          return;
        }
        lock.lock();
        if (failure || stopped) break;
        Walk& walk = walks[w];  // `walks` may have grown meanwhile
        int64_t hi = std::min(rec.result.budget_hi, walk.end);
        found.push_back(IntervalOf(rec.result, rec.overhead, walk.cursor, hi));
        if (journal && journal->record) {
          try {
            journal->record(found.back());
          } catch (...) {
            if (!failure) failure = std::current_exception();
            changed.notify_all();
            return;
          }
        }
        walk.covered += hi - walk.cursor + 1;
        walk.runs += 1;
        covered += hi - walk.cursor + 1;
        ++runs;
        walk.cursor = hi + 1;
        if (progress) progress(covered, total, runs);
        if (max_runs > 0 && runs >= max_runs && covered < total) stopped = true;
        changed.notify_all();
      }
      walks[w].owned = false;
    }
  };
  if (progress && covered > 0) progress(covered, total, runs);
  std::vector<std::thread> pool;
  for (int j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  BudgetAtlas atlas;
  atlas.lo = lo_bytes;
  atlas.hi = hi_bytes;
  atlas.runs = runs;
  atlas.resumed = resumed;
  atlas.covered = covered;
  if (stopped) {  // no intervals and no summary: the range is not covered
    atlas.stopped = true;
    return atlas;
  }

  std::sort(found.begin(), found.end(), [](const AtlasInterval& a, const AtlasInterval& b) { return a.lo < b.lo; });
  for (AtlasInterval& iv : found) {
    if (!atlas.intervals.empty() && SameRun(atlas.intervals.back(), iv))
      atlas.intervals.back().hi = iv.hi;
    else
      atlas.intervals.push_back(std::move(iv));
  }
  // The walk's invariant, checked: exact cover, in order.
  int64_t next = lo_bytes;
  for (const AtlasInterval& iv : atlas.intervals) {
    if (iv.lo != next || iv.hi < iv.lo) throw Error(fmt::format("atlas intervals do not tile the range at {}", next));
    next = iv.hi + 1;
  }
  if (next != hi_bytes + 1) throw Error(fmt::format("atlas intervals end at {}, not {}", next - 1, hi_bytes));
  atlas.summary = SummarizeAtlas(atlas.intervals);
  return atlas;
}

}  // namespace dtr
