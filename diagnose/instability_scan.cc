#include "diagnose/instability_scan.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "checker/farm/parallel.h"
#include "model/error.h"

namespace dtr {

namespace {

// Which side of a boundary a run behaves like. When the outcomes are equal,
// exactly one of the two holds unless the overhead is equidistant; ties count
// for the upper side, so that LikeLower and LikeUpper never both hold.
struct BoundarySides {
  const ScanPoint& lower;
  const ScanPoint& upper;

  static bool Closer(const ScanPoint& p, const ScanPoint& to, const ScanPoint& other) {
    return std::abs(std::log(p.overhead / to.overhead)) <
           std::abs(std::log(p.overhead / other.overhead));
  }
  bool LikeLower(const ScanPoint& p) const {
    if (p.outcome != lower.outcome) return false;
    return lower.outcome != upper.outcome || Closer(p, lower, upper);
  }
  bool LikeUpper(const ScanPoint& p) const {
    if (p.outcome != upper.outcome) return false;
    return lower.outcome != upper.outcome || !Closer(p, lower, upper);
  }
};

// The index of the atlas interval holding `budget`; throws if none does.
size_t IntervalAt(const BudgetAtlas& atlas, int64_t budget) {
  auto it = std::upper_bound(atlas.intervals.begin(), atlas.intervals.end(), budget,
                             [](int64_t b, const AtlasInterval& iv) { return b < iv.lo; });
  if (it == atlas.intervals.begin() || budget > std::prev(it)->hi)
    throw Error(fmt::format("budget {} is outside the atlas [{}, {}]", budget, atlas.lo, atlas.hi));
  return static_cast<size_t>(std::prev(it) - atlas.intervals.begin());
}

}  // namespace

ScanPoint PointOfInterval(const AtlasInterval& iv, int64_t budget) {
  ScanPoint p;
  p.budget = budget;
  p.outcome = iv.behaviour.outcome;
  p.overhead = iv.overhead;
  p.evictions = iv.behaviour.evictions;
  p.distinct_evicted = iv.behaviour.distinct_evicted;
  p.heuristic_evictions = iv.behaviour.heuristic_evictions;
  p.distinct_heuristic_evicted = iv.distinct_heuristic_evicted;
  p.budget_lo = iv.run_lo;
  p.budget_hi = iv.run_hi;
  return p;
}

ScanBoundary BoundaryFromAtlas(const BudgetAtlas& atlas, const ScanPoint& lower,
                               const ScanPoint& upper) {
  if (!(lower.budget < upper.budget))
    throw Error("BoundaryFromAtlas: the two runs are not at increasing budgets");
  BoundarySides sides{lower, upper};
  const std::vector<AtlasInterval>& ivs = atlas.intervals;
  size_t from = IntervalAt(atlas, lower.budget), to = IntervalAt(atlas, upper.budget);
  if (from == to) throw Error("BoundaryFromAtlas: both runs lie in one atlas interval");
  // The walks of LocateBoundary, with every interval already known: up from
  // the lower run while intervals behave like it, down from the upper one.
  // Neither walk can pass the other's start (a run never behaves like both).
  size_t a = from;
  while (a + 1 < to && sides.LikeLower(PointOfInterval(ivs[a + 1], ivs[a + 1].lo))) ++a;
  size_t c = to;
  while (c - 1 > from && sides.LikeUpper(PointOfInterval(ivs[c - 1], ivs[c - 1].lo))) --c;
  ScanBoundary b;
  b.last_byte = ivs[a].hi;
  b.first_byte = ivs[a + 1].lo;
  b.below = PointOfInterval(ivs[a], b.last_byte);
  b.above = PointOfInterval(ivs[a + 1], b.first_byte);
  b.lower_zone_to = ivs[a].hi;
  b.upper_zone_from = ivs[c].lo;
  b.lower_zone_maximal = b.upper_zone_maximal = true;
  return b;
}

void ReadBoundariesOffAtlas(const BudgetAtlas& atlas, const std::vector<ScanPoint>& points,
                            ScanAnalysis& analysis, std::vector<ScanRegimeChange>* changes) {
  auto boundary = [&](size_t lower, size_t upper) -> std::optional<ScanBoundary> {
    if (IntervalAt(atlas, points[lower].budget) == IntervalAt(atlas, points[upper].budget))
      return std::nullopt;
    return BoundaryFromAtlas(atlas, points[lower], points[upper]);
  };
  for (ScanCliff& c : analysis.cliffs) c.boundary = boundary(c.lower, c.upper);
  for (ScanInversion& v : analysis.inversions) {
    v.lower_edge = boundary(v.feasible_below, v.oom_from);
    v.upper_edge = boundary(v.oom_to, v.feasible_above);
  }
  if (!changes) return;
  for (size_t i = 0; i + 1 < points.size(); ++i)
    if (points[i].regime != points[i + 1].regime)
      if (std::optional<ScanBoundary> b = boundary(i, i + 1)) changes->push_back({i, i + 1, *b});
}

std::vector<ExactInversion> FindExactInversions(const BudgetAtlas& atlas,
                                                const std::vector<ScanPoint>& points,
                                                const ScanAnalysis& analysis) {
  std::vector<ExactInversion> out;
  const std::vector<AtlasInterval>& ivs = atlas.intervals;
  std::vector<Outcome> outcomes;
  for (const AtlasInterval& iv : ivs) outcomes.push_back(iv.behaviour.outcome);
  for (const auto& [i, j] : FindInversionStretches(outcomes)) {
    ExactInversion v;
    v.last_feasible_byte = ivs[i - 1].hi;
    v.first_oom_byte = ivs[i].lo;
    v.last_oom_byte = ivs[j].hi;
    v.first_feasible_byte = ivs[j + 1].lo;
    v.first_interval = i;
    v.last_interval = j;
    for (size_t k = 0; k < analysis.inversions.size() && !v.grid_inversion; ++k) {
      const ScanInversion& g = analysis.inversions[k];
      for (size_t p = g.oom_from; p <= g.oom_to; ++p)
        if (v.first_oom_byte <= points[p].budget && points[p].budget <= v.last_oom_byte) {
          v.grid_inversion = k;
          break;
        }
    }
    out.push_back(v);
  }
  return out;
}

ScanBoundary LocateBoundary(const Trace& trace, const Baseline& baseline,
                            const ScanOptions& options, const ScanPoint& lower,
                            const ScanPoint& upper) {
  if (!(lower.budget_hi < upper.budget_lo))
    throw Error(
        "LocateBoundary: the two runs are not at distinct budget intervals in increasing order");
  BoundarySides sides{lower, upper};
  auto like_lower = [&](const ScanPoint& p) { return sides.LikeLower(p); };
  auto like_upper = [&](const ScanPoint& p) { return sides.LikeUpper(p); };
  RunSpec spec = RunSpecOf(options);
  ScanBoundary b;
  auto run_at = [&](int64_t budget) {
    spec.budget = budget;
    ++b.replays;
    return MakeScanPoint(RunOne(trace, baseline, spec));
  };
  // a: last byte known like lower; c: first byte known like upper.
  int64_t a = lower.budget_hi, c = upper.budget_lo;
  ScanPoint at_a = lower, at_c = upper;
  std::optional<ScanPoint> unlike_lower;  // the run at a + 1, once the up walk stopped
  int up = 0, down = 0;
  bool up_done = false, down_done = false;
  auto can_up = [&] { return !up_done && up < options.max_walk; };
  auto can_down = [&] { return !down_done && down < options.max_walk; };
  while (a + 1 < c && (can_up() || can_down())) {
    if (can_up()) {
      ++up;
      ScanPoint p = run_at(a + 1);
      if (like_lower(p)) {
        a = std::min(p.budget_hi, c - 1);
        at_a = p;
      } else {
        up_done = true;
        unlike_lower = p;
      }
    }
    if (a + 1 >= c) break;
    if (can_down()) {
      ++down;
      ScanPoint p = run_at(c - 1);
      if (like_upper(p)) {
        c = std::max(p.budget_lo, a + 1);
        at_c = p;
      } else {
        down_done = true;
      }
    }
  }
  b.lower_zone_to = a;
  b.upper_zone_from = c;
  b.lower_zone_maximal = a + 1 == c || up_done;
  b.upper_zone_maximal = a + 1 == c || down_done;
  if (a + 1 == c) {
    b.last_byte = a;
    b.first_byte = c;
    b.below = at_a;
    b.above = at_c;
  } else {
    if (up_done) {
      b.last_byte = a;
      b.first_byte = a + 1;
      b.below = at_a;
      b.above = *unlike_lower;
    } else {
      // The up walk was cut short: bisect for a switch between a and c.
      int64_t lo = a, hi = c;
      ScanPoint at_lo = at_a, at_hi = at_c;
      while (lo + 1 < hi) {
        ScanPoint p = run_at(lo + 1 + (hi - lo - 1) / 2);
        if (like_lower(p)) {
          lo = std::min(p.budget_hi, hi - 1);
          at_lo = p;
        } else {
          hi = std::max(p.budget_lo, lo + 1);
          at_hi = p;
        }
      }
      b.last_byte = lo;
      b.first_byte = hi;
      b.below = at_lo;
      b.above = at_hi;
    }
  }
  return b;
}

namespace {

// The headline of a grid scan: its runs, and the runs on both sides of every
// boundary --refine located, each with its exact budget interval.
BudgetHeadline ScanHeadline(const Trace& trace, const ScanResult& out) {
  std::vector<ScanPoint> known = out.points;
  auto add = [&](const std::optional<ScanBoundary>& b) {
    if (b) {
      known.push_back(b->below);
      known.push_back(b->above);
    }
  };
  for (const ScanCliff& c : out.analysis.cliffs) add(c.boundary);
  for (const ScanInversion& v : out.analysis.inversions) {
    add(v.lower_edge);
    add(v.upper_edge);
  }
  std::sort(known.begin(), known.end(), [](const ScanPoint& a, const ScanPoint& b) {
    return std::pair(a.budget_lo, a.budget) < std::pair(b.budget_lo, b.budget);
  });
  return HeadlineOf(trace, std::string(out.heuristic->name), out.baseline.memory, known,
                    out.cliff_factor, nullptr, nullptr);
}

// The exact scan (see the header): the atlas, grid points read off it, every
// boundary from it.
void ScanExactly(const Trace& trace, const Baseline& baseline, const std::vector<Ratio>& sorted,
                 const ScanOptions& options, const ProgressFn& progress, ScanResult& out) {
  if (sorted.empty()) throw Error("a scan needs at least one ratio");
  auto [lo, hi] = GridBudgetRange(sorted, baseline.memory);
  out.atlas = BuildAtlas(
      trace, baseline, RunSpecOf(options), lo, hi, options.jobs,
      [&](int64_t covered, int64_t total, size_t, int64_t) {
        if (progress) progress(covered, total);
      },
      /*cap=*/{}, options.atlas_journal);
  const BudgetAtlas& atlas = *out.atlas;
  for (const Ratio& r : sorted) {
    int64_t budget = BudgetChoice{.ratio = r, .budget = std::nullopt}.Bytes(baseline.memory);
    ScanPoint p = PointOfInterval(atlas.intervals[IntervalAt(atlas, budget)], budget);
    p.ratio = r;
    out.points.push_back(p);
  }
  out.analysis = AnalyzeScan(out.points, options.cliff_factor);
  ReadBoundariesOffAtlas(atlas, out.points, out.analysis, &out.regime_changes);
  out.exact_inversions = FindExactInversions(atlas, out.points, out.analysis);
}

}  // namespace

ScanResult ScanInstability(const Trace& trace, const Baseline& baseline,
                           const std::vector<Ratio>& ratios, const ScanOptions& options,
                           const ProgressFn& progress) {
  if (!options.heuristic) throw Error("a scan needs a heuristic");
  if (options.refine && options.exact) throw Error("a scan is refined or exact, not both");
  ScanResult out;
  out.heuristic = options.heuristic;
  out.runtime = options.runtime;
  out.cliff_factor = options.cliff_factor;
  out.baseline = baseline;
  std::vector<Ratio> sorted = ratios;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Ratio& a, const Ratio& b) { return a.value < b.value; });
  if (options.exact) {
    ScanExactly(trace, baseline, sorted, options, progress, out);
    AtlasCoverage walked;
    walked.lo = out.atlas->lo;
    walked.hi = out.atlas->hi;
    walked.sections.push_back(*out.atlas);
    out.headline = HeadlineOf(trace, std::string(options.heuristic->name), baseline.memory,
                              out.points, options.cliff_factor, &walked, nullptr);
    return out;
  }
  std::vector<RunSpec> specs;
  for (const Ratio& r : sorted) {
    RunSpec s = RunSpecOf(options);
    s.ratio = r;
    specs.push_back(s);
  }
  for (const RunRecord& run : RunMany(trace, baseline, specs, options.jobs, progress,
                                      options.grid_journal, 0, options.watch))
    out.points.push_back(MakeScanPoint(run));
  out.analysis = AnalyzeScan(out.points, options.cliff_factor);
  if (!options.refine) {
    out.headline = ScanHeadline(trace, out);
    return out;
  }

  // One task per boundary, spread over worker threads or MPI ranks.
  std::vector<std::pair<size_t, size_t>> pairs;  // lower, upper grid indices
  std::vector<std::optional<ScanBoundary>*> slots;
  for (ScanCliff& c : out.analysis.cliffs) {
    pairs.emplace_back(c.lower, c.upper);
    slots.push_back(&c.boundary);
  }
  for (ScanInversion& v : out.analysis.inversions) {
    pairs.emplace_back(v.feasible_below, v.oom_from);
    slots.push_back(&v.lower_edge);
    pairs.emplace_back(v.oom_to, v.feasible_above);
    slots.push_back(&v.upper_edge);
  }
  std::vector<ScanBoundary> found = ParallelMap<ScanBoundary>(
      pairs.size(), options.jobs,
      [&](size_t i) {
        return LocateBoundary(trace, baseline, options, out.points[pairs[i].first],
                              out.points[pairs[i].second]);
      },
      progress);
  for (size_t i = 0; i < pairs.size(); ++i) {
    *slots[i] = found[i];
    out.refine_replays += found[i].replays;
  }
  out.headline = ScanHeadline(trace, out);
  return out;
}

}  // namespace dtr
