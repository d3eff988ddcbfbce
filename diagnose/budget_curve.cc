#include "diagnose/budget_curve.h"

#include <algorithm>
#include <numeric>

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

int OutcomeRank(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return 0;
    case Outcome::kThrash:
      return 1;
    case Outcome::kStopped:
      return 3;
    default:
      return 2;
  }
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

std::optional<ScanBoundary> TouchingBoundary(const ScanPoint& lower, const ScanPoint& upper) {
  if (lower.budget_hi == kInfiniteBudget || lower.budget_hi + 1 != upper.budget_lo)
    return std::nullopt;
  ScanBoundary b;
  b.last_byte = lower.budget_hi;
  b.first_byte = upper.budget_lo;
  b.below = lower;
  b.above = upper;
  b.lower_zone_to = b.last_byte;
  b.upper_zone_from = b.first_byte;
  b.lower_zone_maximal = b.upper_zone_maximal = true;
  return b;
}

bool IsCliff(double overhead_a, double overhead_b, double cliff_factor) {
  return !Within(overhead_a, overhead_b, cliff_factor);
}

double OverheadFactor(double a, double b) { return std::max(a, b) / std::min(a, b); }

std::vector<std::pair<size_t, size_t>> FindInversionStretches(
    const std::vector<Outcome>& outcomes) {
  std::vector<std::pair<size_t, size_t>> out;
  const size_t n = outcomes.size();
  for (size_t i = 1; i + 1 < n;) {
    if (outcomes[i] != Outcome::kOom || outcomes[i - 1] != Outcome::kPass) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < n && outcomes[j + 1] == Outcome::kOom) ++j;
    if (j + 1 < n && outcomes[j + 1] == Outcome::kPass) out.emplace_back(i, j);
    i = j + 1;
  }
  return out;
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
    if (!IsCliff(p.overhead, q.overhead, cliff_factor)) continue;
    out.cliffs.push_back(
        {i, i + 1, OverheadFactor(p.overhead, q.overhead), TouchingBoundary(p, q)});
  }
  // Inversions.
  std::vector<Outcome> outcomes;
  for (const ScanPoint& p : points) outcomes.push_back(p.outcome);
  for (const auto& [from, to] : FindInversionStretches(outcomes))
    out.inversions.push_back({from - 1, from, to, to + 1,
                              TouchingBoundary(points[from - 1], points[from]),
                              TouchingBoundary(points[to], points[to + 1])});
  return out;
}

std::vector<OomStretch> FindOomStretches(const std::vector<ScanPoint>& points,
                                         const ScanAnalysis& analysis) {
  std::vector<OomStretch> out;
  const size_t n = points.size();
  auto oom = [&](size_t i) { return points[i].outcome == Outcome::kOom; };
  for (size_t i = 0; i < n;) {
    if (!oom(i)) {
      ++i;
      continue;
    }
    OomStretch s;
    s.from = i;
    while (i < n && oom(i)) ++i;
    s.to = i - 1;
    for (size_t k = 0; k < analysis.inversions.size(); ++k)
      if (analysis.inversions[k].oom_from == s.from) s.inversion = k;
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (size_t k = s.from; k <= s.to; ++k)
      spans.push_back({points[k].budget_lo, points[k].budget_hi});
    std::sort(spans.begin(), spans.end());
    for (const auto& span : spans) {
      if (!s.known_oom.empty() && s.known_oom.back().second != kInfiniteBudget &&
          span.first <= s.known_oom.back().second + 1)
        s.known_oom.back().second = std::max(s.known_oom.back().second, span.second);
      else
        s.known_oom.push_back(span);
    }
    s.exact_lower_edge = s.from > 0 && TouchingBoundary(points[s.from - 1], points[s.from]);
    s.exact_upper_edge = s.to + 1 < n && TouchingBoundary(points[s.to], points[s.to + 1]);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace dtr
