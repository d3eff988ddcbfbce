#include "diagnose/instability_scan.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "diagnose/parallel.h"
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

}  // namespace

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
  auto closer = [](const ScanPoint& p, const ScanPoint& to, const ScanPoint& other) {
    return std::abs(std::log(p.overhead / to.overhead)) <
           std::abs(std::log(p.overhead / other.overhead));
  };
  // When the outcomes are equal, exactly one of the two holds unless the
  // overhead is equidistant; ties count for the upper side, so that
  // like_lower and like_upper never both hold.
  auto like_lower = [&](const ScanPoint& p) {
    if (p.outcome != lower.outcome) return false;
    return lower.outcome != upper.outcome || closer(p, lower, upper);
  };
  auto like_upper = [&](const ScanPoint& p) {
    if (p.outcome != upper.outcome) return false;
    return lower.outcome != upper.outcome || !closer(p, lower, upper);
  };
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

ScanResult ScanInstability(const Trace& trace, const Baseline& baseline,
                           const std::vector<Ratio>& ratios, const ScanOptions& options,
                           const ProgressFn& progress) {
  if (!options.heuristic) throw Error("a scan needs a heuristic");
  ScanResult out;
  out.heuristic = options.heuristic;
  out.runtime = options.runtime;
  out.cliff_factor = options.cliff_factor;
  out.baseline = baseline;
  std::vector<Ratio> sorted = ratios;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Ratio& a, const Ratio& b) { return a.value < b.value; });
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
