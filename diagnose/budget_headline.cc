#include "diagnose/budget_headline.h"

#include <fmt/core.h>

#include <algorithm>
#include <utility>

#include "checker/proofs/memory_bound.h"
#include "diagnose/certificate.h"
#include "diagnose/report_model.h"
#include "model/attribution.h"

namespace dtr {

namespace {

using Interval = std::pair<int64_t, int64_t>;

// Sorted, with overlapping or adjacent intervals joined.
std::vector<Interval> Merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.first - 1 <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

}  // namespace

std::string StaticFloorCause(const Trace& trace, const MemoryBound& bound) {
  if (bound.attained_by.op < 0)
    return "static bound: the storages pinned at the end of the program";
  return fmt::format("static bound: {} needs its arguments, what is pinned before it and its outputs at once",
                     OperatorLabel(trace, bound.attained_by.op));
}

namespace {

std::string InherentCause(const Certificate& c) {
  switch (c.kind) {
    case CertificateKind::kUnsatWindow:
      return fmt::format("Z3: no schedule of a window of the program fits {} bytes", c.budget);
    case CertificateKind::kCut:
      return fmt::format("the keep-or-recompute cut refutes {} bytes", c.budget);
    default:
      return fmt::format("an inherent verdict at {} bytes", c.budget);
  }
}

}  // namespace

BudgetHeadline HeadlineOf(const Trace& trace, const std::string& heuristic, int64_t baseline_memory,
                          const std::vector<ScanPoint>& points, double cliff_factor,
                          const AtlasCoverage* atlas,
                          const std::vector<const Classification*>* verdicts) {
  BudgetHeadline h;
  h.heuristic = heuristic;
  h.baseline_memory = baseline_memory;
  h.cliff_factor = cliff_factor;
  h.verdicts = verdicts != nullptr;

  const MemoryBound bound = ComputeMemoryBound(trace);
  h.floor = bound.bytes;
  h.floor_cause = StaticFloorCause(trace, bound);
  if (verdicts)
    for (const Classification* c : *verdicts)
      if (c && c->verdict == Verdict::kInherent && c->certificate && c->certificate->Holds() &&
          c->budget + 1 > h.floor) {
        h.floor = c->budget + 1;
        h.floor_cause = InherentCause(*c->certificate);
      }

  // What is known, to the byte: each run's own interval and the atlas's.
  std::vector<Interval> fail, pass;
  for (const ScanPoint& p : points)
    (p.outcome == Outcome::kPass ? pass : fail).push_back({p.budget_lo, p.budget_hi});
  if (atlas) {
    for (const Interval& i : atlas->Infeasible()) fail.push_back(i);
    for (const BudgetAtlas& s : atlas->sections)
      for (const AtlasInterval& iv : s.intervals)
        if (iv.feasible()) pass.push_back({iv.lo, iv.hi});
  }
  fail = Merged(std::move(fail));
  pass = Merged(std::move(pass));
  if (!pass.empty()) h.smallest_pass = pass.front().first;

  // Exact when the failing budgets reach from the floor to the smallest pass.
  if (h.smallest_pass) {
    int64_t known_to = h.floor;  // every budget below it is known to fail
    for (const Interval& f : fail)
      if (f.first <= known_to && f.second >= known_to) known_to = f.second + 1;
    h.smallest_pass_exact = known_to >= *h.smallest_pass;
    if (!h.smallest_pass_exact) {
      h.unknown_lo = known_to;
      h.unknown_hi = *h.smallest_pass - 1;
      for (const Interval& f : fail)
        if (f.first > known_to) h.unknown_hi = std::min(h.unknown_hi, f.first - 1);
    }
  }

  for (const Interval& f : fail) {
    if (f.second < h.floor) continue;
    FailingBand b;
    b.lo = std::max(f.first, h.floor);
    b.hi = f.second;
    b.inversion = h.smallest_pass && b.lo > *h.smallest_pass && b.hi < pass.back().second;
    if (verdicts)
      for (size_t i = 0; i < points.size(); ++i) {
        const Classification* c = (*verdicts)[i];
        if (!c || points[i].budget < b.lo || points[i].budget > b.hi) continue;
        b.policy_induced += c->verdict == Verdict::kPolicyInduced;
        b.inherent += c->verdict == Verdict::kInherent;
        b.undetermined += c->verdict == Verdict::kUndetermined;
      }
    h.bands.push_back(b);
  }

  // Cliffs between neighbouring budgets: in the atlas's walked sections, and
  // between rows whose intervals touch.
  std::vector<HeadlineCliff> cliffs;
  if (atlas)
    for (const AtlasCliff& c : FindAtlasCliffs(*atlas, cliff_factor))
      cliffs.push_back({c.last_byte, c.first_byte, c.overhead_below, c.overhead_above, c.factor});
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const ScanPoint &p = points[i], &q = points[i + 1];
    if (p.outcome != Outcome::kPass || q.outcome != Outcome::kPass || p.budget_hi + 1 != q.budget_lo ||
        !IsCliff(p.overhead, q.overhead, cliff_factor))
      continue;
    cliffs.push_back({p.budget_hi, q.budget_lo, p.overhead, q.overhead, OverheadFactor(p.overhead, q.overhead)});
  }
  for (const HeadlineCliff& c : cliffs)
    if (!h.worst_cliff || c.factor > h.worst_cliff->factor) h.worst_cliff = c;
  return h;
}

BudgetHeadline HeadlineOf(const Trace& trace, const ReportModel& m) {
  std::vector<const Classification*> verdicts(m.rows.size(), nullptr);
  if (m.verdicts)
    for (const BudgetVerdict& v : *m.verdicts) verdicts[v.run] = &v.classification;
  return HeadlineOf(trace, m.heuristic, m.trace.baseline.memory, m.curve.points, m.cliff_factor,
                    m.atlas ? &*m.atlas : nullptr, m.verdicts ? &verdicts : nullptr);
}

}  // namespace dtr
