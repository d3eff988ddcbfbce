#include "diagnose/instability_scan.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "checker/parallel.h"
#include "model/error.h"

namespace dtr {

namespace {

bool Within(double x, double y, double factor) {
  if (x == y) return true;
  if (x <= 0 || y <= 0) return false;
  return std::max(x, y) / std::min(x, y) <= factor;
}

// The linking rule of regimes (see the header).
bool Linked(const ScanPoint& p, const ScanPoint& q, double factor) {
  if (p.outcome != q.outcome) return false;
  if (p.outcome != Outcome::kPass) return true;
  return Within(p.overhead, q.overhead, factor) &&
         Within(p.evictions_per_storage(), q.evictions_per_storage(), factor);
}

int OutcomeRank(Outcome o) { return o == Outcome::kPass ? 0 : o == Outcome::kThrash ? 1 : 2; }

RunSpec SpecFor(const ScanOptions& o) {
  RunSpec s;
  s.heuristic = o.heuristic;
  s.runtime = o.runtime;
  s.overhead_limit = o.overhead_limit;
  s.seed = o.seed;
  return s;
}

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

std::vector<ExactInversion> FindExactInversions(const BudgetAtlas& atlas,
                                                const std::vector<ScanPoint>& points,
                                                const ScanAnalysis& analysis) {
  std::vector<ExactInversion> out;
  const std::vector<AtlasInterval>& ivs = atlas.intervals;
  for (size_t i = 1; i + 1 < ivs.size();) {
    if (ivs[i].behaviour.outcome != Outcome::kOom || !ivs[i - 1].feasible()) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < ivs.size() && ivs[j + 1].behaviour.outcome == Outcome::kOom) ++j;
    if (j + 1 < ivs.size() && ivs[j + 1].feasible()) {
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
    i = j + 1;
  }
  return out;
}

ScanPoint MakeScanPoint(const RunRecord& run) {
  const RunResult& r = run.result;
  ScanPoint p;
  if (!run.spec.budget) p.ratio = run.spec.ratio;
  p.budget = r.budget;
  p.outcome = r.outcome;
  p.overhead = run.overhead;
  p.evictions = r.evictions();
  p.distinct_evicted = r.distinct_evicted;
  p.heuristic_evictions = r.heuristic_evictions;
  p.distinct_heuristic_evicted = r.distinct_heuristic_evicted;
  p.budget_lo = r.budget_lo;
  p.budget_hi = r.budget_hi;
  return p;
}

ScanAnalysis AnalyzeScan(std::vector<ScanPoint>& points, double cliff_factor) {
  if (!(cliff_factor > 1)) throw Error("the cliff factor must be greater than 1");
  ScanAnalysis out;
  const size_t n = points.size();
  // Regimes: connected components of Linked(), by union-find.
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      if (find(i) != find(j) && Linked(points[i], points[j], cliff_factor))
        parent[find(i)] = find(j);
  std::vector<size_t> roots;
  for (size_t i = 0; i < n; ++i)
    if (find(i) == i) roots.push_back(i);
  std::vector<ScanRegime> regimes(roots.size());
  std::vector<int> regime_of_root(n, -1);
  for (size_t r = 0; r < roots.size(); ++r) regime_of_root[roots[r]] = static_cast<int>(r);
  for (size_t i = 0; i < n; ++i) {
    ScanRegime& g = regimes[regime_of_root[find(i)]];
    const ScanPoint& p = points[i];
    double eps = p.evictions_per_storage();
    if (g.runs == 0) {
      g.outcome = p.outcome;
      g.overhead_min = g.overhead_max = p.overhead;
      g.per_storage_min = g.per_storage_max = eps;
    }
    g.overhead_min = std::min(g.overhead_min, p.overhead);
    g.overhead_max = std::max(g.overhead_max, p.overhead);
    g.per_storage_min = std::min(g.per_storage_min, eps);
    g.per_storage_max = std::max(g.per_storage_max, eps);
    ++g.runs;
  }
  // Number them: passing regimes by least overhead, then thrash, then OOM.
  std::vector<size_t> order(regimes.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<size_t> first_point(regimes.size(), n);
  for (size_t i = n; i-- > 0;) first_point[regime_of_root[find(i)]] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const ScanRegime &a = regimes[x], &b = regimes[y];
    if (OutcomeRank(a.outcome) != OutcomeRank(b.outcome))
      return OutcomeRank(a.outcome) < OutcomeRank(b.outcome);
    if (a.overhead_min != b.overhead_min) return a.overhead_min < b.overhead_min;
    return first_point[x] < first_point[y];
  });
  std::vector<int> renumber(regimes.size());
  for (size_t k = 0; k < order.size(); ++k) {
    renumber[order[k]] = static_cast<int>(k);
    out.regimes.push_back(regimes[order[k]]);
  }
  for (size_t i = 0; i < n; ++i) {
    points[i].regime = renumber[regime_of_root[find(i)]];
    std::vector<GridRange>& ranges = out.regimes[points[i].regime].ranges;
    if (i > 0 && points[i - 1].regime == points[i].regime)
      ranges.back().to = i;
    else
      ranges.push_back({i, i});
  }
  // Cliffs.
  for (size_t i = 0; i + 1 < n; ++i) {
    const ScanPoint &p = points[i], &q = points[i + 1];
    if (p.outcome != Outcome::kPass || q.outcome != Outcome::kPass) continue;
    if (Within(p.overhead, q.overhead, cliff_factor)) continue;
    out.cliffs.push_back(
        {i, i + 1, std::max(p.overhead, q.overhead) / std::min(p.overhead, q.overhead), {}});
  }
  // Inversions: maximal OOM runs with a pass on each side.
  for (size_t i = 1; i + 1 < n;) {
    if (points[i].outcome != Outcome::kOom || points[i - 1].outcome != Outcome::kPass) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < n && points[j + 1].outcome == Outcome::kOom) ++j;
    if (j + 1 < n && points[j + 1].outcome == Outcome::kPass)
      out.inversions.push_back({i - 1, i, j, j + 1, {}, {}});
    i = j + 1;
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
  RunSpec spec = SpecFor(options);
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

// The exact scan (see the header): the atlas, grid points read off it, every
// boundary from it.
void ScanExactly(const Trace& trace, const Baseline& baseline, const std::vector<Ratio>& sorted,
                 const ScanOptions& options, const ProgressFn& progress, ScanResult& out) {
  if (sorted.empty()) throw Error("a scan needs at least one ratio");
  int64_t lo = BudgetForRatio(baseline.memory, sorted.front().value);
  int64_t hi = BudgetForRatio(baseline.memory, sorted.back().value);
  out.atlas = BuildAtlas(trace, baseline, SpecFor(options), lo, hi, options.jobs,
                         [&](int64_t covered, int64_t total, size_t) {
                           if (progress) progress(covered, total);
                         });
  const BudgetAtlas& atlas = *out.atlas;
  for (const Ratio& r : sorted) {
    int64_t budget = BudgetForRatio(baseline.memory, r.value);
    ScanPoint p = PointOfInterval(atlas.intervals[IntervalAt(atlas, budget)], budget);
    p.ratio = r;
    out.points.push_back(p);
  }
  out.analysis = AnalyzeScan(out.points, options.cliff_factor);
  const std::vector<ScanPoint>& points = out.points;
  // Adjacent grid points in one interval are the same run: no boundary between them.
  auto boundary = [&](size_t lower, size_t upper) -> std::optional<ScanBoundary> {
    if (IntervalAt(atlas, points[lower].budget) == IntervalAt(atlas, points[upper].budget))
      return std::nullopt;
    return BoundaryFromAtlas(atlas, points[lower], points[upper]);
  };
  for (ScanCliff& c : out.analysis.cliffs) c.boundary = boundary(c.lower, c.upper);
  for (ScanInversion& v : out.analysis.inversions) {
    v.lower_edge = boundary(v.feasible_below, v.oom_from);
    v.upper_edge = boundary(v.oom_to, v.feasible_above);
  }
  for (size_t i = 0; i + 1 < points.size(); ++i)
    if (points[i].regime != points[i + 1].regime)
      if (std::optional<ScanBoundary> b = boundary(i, i + 1))
        out.regime_changes.push_back({i, i + 1, *b});
  out.exact_inversions = FindExactInversions(atlas, points, out.analysis);
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
    return out;
  }
  std::vector<RunSpec> specs;
  for (const Ratio& r : sorted) {
    RunSpec s = SpecFor(options);
    s.ratio = r;
    specs.push_back(s);
  }
  for (const RunRecord& run : RunMany(trace, baseline, specs, options.jobs, progress))
    out.points.push_back(MakeScanPoint(run));
  out.analysis = AnalyzeScan(out.points, options.cliff_factor);
  if (!options.refine) return out;

  // One task per boundary, spread over worker threads.
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
  std::vector<ScanBoundary> found(pairs.size());
  ParallelFor(
      pairs.size(), options.jobs,
      [&](size_t i) {
        found[i] = LocateBoundary(trace, baseline, options, out.points[pairs[i].first],
                                  out.points[pairs[i].second]);
      },
      [&](size_t done) {
        if (progress) progress(done, pairs.size());
      });
  for (size_t i = 0; i < pairs.size(); ++i) {
    *slots[i] = found[i];
    out.refine_replays += found[i].replays;
  }
  return out;
}

}  // namespace dtr
