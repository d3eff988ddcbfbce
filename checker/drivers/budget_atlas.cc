// BuildAtlas runs an AtlasWalk (checker/drivers/atlas_walk.h) on the task farm
// (checker/farm/parallel.h): the range is cut into parts, each part is walked up
// by one worker, and the parts are merged in budget order, so the atlas does
// not depend on the number of workers or their timing.
#include "checker/drivers/budget_atlas.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <set>

#include "checker/drivers/atlas_walk.h"
#include "checker/drivers/rising_replays.h"
#include "checker/farm/parallel.h"
#include "model/error.h"

namespace dtr {

namespace {

constexpr size_t kPartsPerWorker = 4;

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

BudgetAtlas WalkedPart(BudgetAtlas atlas) {
  if (!atlas.stopped) return atlas;
  atlas.asked_hi = atlas.hi;
  atlas.hi = atlas.lo + atlas.covered - 1;
  atlas.intervals = std::move(atlas.prefix);
  atlas.prefix.clear();
  atlas.summary = SummarizeAtlas(atlas.intervals);
  return atlas;
}

BudgetAtlas BuildAtlas(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                       int64_t lo_bytes, int64_t hi_bytes, int jobs,
                       const AtlasProgressFn& progress, AtlasCap cap, const AtlasJournal* journal) {
  if (lo_bytes < 0 || hi_bytes < lo_bytes)
    throw Error(fmt::format("an atlas needs 0 <= lo <= hi, got budgets [{}, {}]", lo_bytes, hi_bytes));
  if (hi_bytes == kInfiniteBudget) throw Error("an atlas range must end below the infinite budget");
  const int workers = FarmWorkers<AtlasPartWalk>(jobs, std::numeric_limits<size_t>::max());
  // One part per worker would leave workers idle behind a dense part; a few
  // per worker balance the load for a few seam replays (not counted in runs).
  AtlasWalk walk(lo_bytes, hi_bytes, journal ? journal->finished : std::vector<AtlasInterval>{},
                 cap, workers == 1 ? 1 : kPartsPerWorker * static_cast<size_t>(workers));

  const int64_t total = hi_bytes - lo_bytes + 1;
  std::mutex mu;  // serializes journal records and progress
  int64_t covered = walk.resumed_width();
  size_t runs = walk.resumed();
  int64_t evals = walk.resumed_evals();
  std::atomic<bool> cancel{false};
  if (progress && covered > 0) progress(covered, total, runs, evals);
  auto record = [&](const AtlasInterval& piece) {
    std::lock_guard<std::mutex> lock(mu);
    if (journal && journal->record) journal->record(piece);
    covered += piece.width();
    ++runs;
    evals += piece.heuristic_evals;
    if (progress) progress(covered, total, runs, evals);
  };
  // A part walked on another MPI rank records its pieces there, where
  // nothing is kept: they are recorded here when the part arrives.
  auto record_here = [&](const AtlasInterval& piece) {
    if (FarmCollectsHere()) record(piece);
  };
  // Each part walks up from its lo, each run resuming the one before
  // (checker/drivers/rising_replays.h).
  RunSpec at_lo = spec;
  at_lo.ratio.reset();
  at_lo.budget = lo_bytes;
  const ReplayConfig config = ConfigFor(at_lo, baseline);
  auto walk_part = [&](size_t k) {
    RisingReplays replays(trace, config);
    auto replay = [&](int64_t budget) {
      RunResult r = replays.Run(budget);
      return IntervalOf(r, Overhead(r.clock, baseline.compute), budget, budget);
    };
    return walk.WalkPart(k, replay, record_here, &cancel);
  };
  RunTaskFarm<AtlasPartWalk>(
      walk.parts().size(), workers, walk_part,
      [&](size_t k, AtlasPartWalk&& part) {
        bool more = walk.Collect(k, std::move(part));
        if (!more) cancel = true;
        return more;
      },
      nullptr,
      [&](size_t, const AtlasPartWalk& part) {
        for (const AtlasInterval& piece : part.pieces) record(piece);
      });
  BudgetAtlas atlas = walk.Finish();
  atlas.cap = cap;
  return atlas;
}

}  // namespace dtr
