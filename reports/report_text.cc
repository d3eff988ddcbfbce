#include "reports/report_text.h"

#include <fmt/core.h>

#include <sstream>

#include "reports/instability_report.h"
#include "reports/number_format.h"
#include "reports/proof_report.h"

namespace dtr {

std::string RatioLabel(const BudgetRow& row) {
  return row.run.spec.ratio ? row.run.spec.ratio->text : "-";
}

namespace {

std::string Percent(int64_t bytes, int64_t baseline) {
  return baseline > 0 ? fmt::format("{:.2f}%", 100.0 * static_cast<double>(bytes) /
                                                   static_cast<double>(baseline))
                      : "-";
}

}  // namespace

std::vector<std::string> CurveFindings(const ReportModel& m) {
  std::vector<std::string> out;
  const int64_t base = m.trace.baseline.memory;
  const size_t n = m.rows.size();
  for (const OomStretch& b : m.curve.oom_stretches) {
    const BudgetRow& first = m.rows[b.from];
    const BudgetRow& last = m.rows[b.to];
    std::string where = b.from == b.to
                            ? fmt::format("ratio {}", RatioLabel(first))
                            : fmt::format("ratios {} to {}", RatioLabel(first), RatioLabel(last));
    auto describe = [&](int64_t lo, int64_t hi) {
      return fmt::format("{} bytes ({} to {} of the baseline)", ByteInterval(lo, hi),
                         Percent(lo, base), hi == kInfiniteBudget ? "inf" : Percent(hi, base));
    };
    std::string known;
    if (b.known_oom.size() > 2) {
      known = fmt::format("{} intervals from {} to {}, with gaps not replayed", b.known_oom.size(),
                          describe(b.known_oom.front().first, b.known_oom.front().second),
                          describe(b.known_oom.back().first, b.known_oom.back().second));
    } else {
      for (const auto& [lo, hi] : b.known_oom)
        known += (known.empty() ? "" : ", ") + describe(lo, hi);
    }
    std::string kind = b.inversion                    ? "Feasibility inversion"
                       : b.from == 0 && b.to + 1 == n ? "OOM everywhere on the grid"
                       : b.from == 0                  ? "OOM at the lowest budgets of the grid"
                       : b.to + 1 == n ? "OOM at the highest budgets of the grid (no budget above "
                                         "it passes on the grid: not an inversion)"
                                       : "OOM next to thrashing budgets (not an inversion)";
    std::string edges;
    if (b.exact_lower_edge) edges += " Its lower edge is exact.";
    if (b.exact_upper_edge) edges += " Its upper edge is exact.";
    // With a complete atlas, the failing stretch around the first OOM row is
    // known to the byte: say so instead of the grid's partial knowledge.
    if (m.atlas && !m.atlas->atlas.stopped) {
      const int64_t first_budget = first.run.result.budget;
      for (const auto& [lo, hi] : m.atlas->infeasible) {
        if (hi < first_budget || lo > first_budget) continue;
        known = fmt::format("every budget in {} fails ({} bytes wide)", describe(lo, hi),
                            GroupedInt(hi - lo + 1));
        if (last.run.result.budget > hi)
          known += fmt::format(
              "; the stretch's higher grid points lie in {} more failing stretches", [&] {
                int k = 0;
                for (const auto& [l2, h2] : m.atlas->infeasible)
                  k += l2 > hi && l2 <= last.run.result.budget;
                return k;
              }());
        edges.clear();
        break;
      }
    }
    out.push_back(fmt::format(
        "{}: OOM at {}. {}{}.{}", kind, where,
        known.rfind("every budget", 0) == 0 ? "The atlas: " : "Known OOM budgets: ", known, edges));
  }
  for (const ScanCliff& c : m.curve.analysis.cliffs) {
    const BudgetRow& lo = m.rows[c.lower];
    const BudgetRow& hi = m.rows[c.upper];
    out.push_back(fmt::format(
        "Cliff: overhead {} at ratio {} and {} at ratio {} (x{:.2f} between neighbouring "
        "feasible budgets).",
        ShortDouble(lo.run.overhead), RatioLabel(lo), ShortDouble(hi.run.overhead), RatioLabel(hi),
        c.factor));
  }
  if (out.empty()) out.push_back("No OOM and no cliff on this grid.");
  return out;
}

std::string TimelineSummary(const ReportModel& m) {
  if (!m.timeline) return "No run.";
  const MemoryTimeline& t = *m.timeline;
  const BudgetRow& row = m.rows[t.run];
  std::string s = fmt::format(
      "Run at ratio {} (budget {} bytes, {}), selected as the {}: {} computations, {} of "
      "them rematerializations, {} heuristic evictions.",
      RatioLabel(row), GroupedInt(t.budget), HumanBytes(t.budget), t.selection,
      GroupedInt(t.events), GroupedInt(t.remat_events),
      GroupedInt(row.run.result.heuristic_evictions));
  if (t.oom)
    s += fmt::format(
        " It ran out of memory at computation {}: {} needs {} bytes with {} in use, over the "
        "budget.",
        GroupedInt(t.oom->event), t.oom->op, GroupedInt(t.oom->request),
        GroupedInt(t.oom->memory_usage));
  else
    s += fmt::format(" It completed with peak memory {} bytes.",
                     GroupedInt(row.run.result.max_memory));
  return s;
}

std::string FrontierSummary(const Trace& trace, const ReportModel& m, const OomFrontier& f) {
  std::string ratios;
  if (f.runs.size() > 4) {
    ratios = fmt::format("{} to {}, {} grid points", RatioLabel(m.rows[f.runs.front()]),
                         RatioLabel(m.rows[f.runs.back()]), f.runs.size());
  } else {
    for (size_t i : f.runs) ratios += (ratios.empty() ? "" : ", ") + RatioLabel(m.rows[i]);
  }
  std::string runs =
      f.budget_intervals.size() == 1
          ? fmt::format("the same run for every budget in {} bytes",
                        ByteInterval(f.budget_intervals[0].first, f.budget_intervals[0].second))
          : fmt::format(
                "{} distinct runs, for budgets in {} ... {} bytes, fail in the same state",
                f.budget_intervals.size(),
                ByteInterval(f.budget_intervals.front().first, f.budget_intervals.front().second),
                ByteInterval(f.budget_intervals.back().first, f.budget_intervals.back().second));
  const RematFrontier& r = f.frontier;
  const int64_t depth = static_cast<int64_t>(r.frames.size()) - 1;
  return fmt::format(
      "Ratios {} ({}): while computing {}, {}. In use {} "
      "(pinned {}, locked {} in {} storages) + request {} = {} bytes, more than any of "
      "these budgets, and nothing was left to evict.",
      ratios, runs, trace.op_of(r.frames.front().tensor).name,
      depth == 0
          ? std::string("with no rematerialization pending")
          : fmt::format("{} rematerialization{} pending below it (innermost: {})", depth,
                        depth == 1 ? " was" : "s were", trace.op_of(r.frames.back().tensor).name),
      GroupedInt(r.memory_usage), GroupedInt(r.pinned_bytes), GroupedInt(r.locked_bytes),
      r.locked.size(), GroupedInt(r.request), GroupedInt(r.memory_usage + r.request));
}

std::vector<std::string> AtlasFindings(const ReportModel& m) {
  std::vector<std::string> out;
  if (!m.atlas) {
    out.push_back(NotComputed(m.atlas_skipped));
    return out;
  }
  const ReportAtlas& a = *m.atlas;
  const int64_t base = m.trace.baseline.memory;
  if (a.atlas.stopped) {
    out.push_back(fmt::format(
        "Not computed: the exact atlas of [{}, {}] bytes was stopped after {} replays (the cap; "
        "--atlas-max-runs raises it) with {} of the range covered. The OOM bands below are the "
        "grid's.",
        GroupedInt(a.lo), GroupedInt(a.hi), a.atlas.runs,
        Percent(a.atlas.covered, a.hi - a.lo + 1)));
    return out;
  }
  const AtlasSummary& s = a.atlas.summary;
  size_t inversions = 0, missed = 0;
  if (m.curve.exact_inversions)
    for (const ExactInversion& v : *m.curve.exact_inversions) {
      ++inversions;
      missed += v.missed_by_grid();
    }
  std::string extremes;
  if (s.smallest_feasible)
    extremes += fmt::format(" The smallest feasible budget in the range is {} bytes ({}).",
                            GroupedInt(*s.smallest_feasible), Percent(*s.smallest_feasible, base));
  if (s.largest_oom)
    extremes += fmt::format(" The largest budget that runs out of memory is {} bytes ({}).",
                            GroupedInt(*s.largest_oom), Percent(*s.largest_oom, base));
  out.push_back(fmt::format(
      "Every budget from {} to {} bytes was replayed exactly (no sampling): {} intervals of "
      "identical runs ({} distinct behaviours) from {} replays; {} bytes feasible, {} bytes "
      "infeasible, {} feasibility inversion{} ({} missed by the grid).{}",
      GroupedInt(a.lo), GroupedInt(a.hi), GroupedInt(static_cast<int64_t>(s.intervals)),
      s.distinct_behaviours, a.atlas.runs, GroupedInt(s.feasible_width),
      GroupedInt(s.infeasible_width), inversions, inversions == 1 ? "" : "s", missed, extremes));
  return out;
}

std::string RegimeLabel(const BudgetRow& row) {
  return row.regime >= 0 ? fmt::format("R{}", row.regime) : "-";
}

std::vector<std::string> RegimeLines(const ReportModel& m) {
  std::vector<std::string> out;
  for (size_t i = 0; i < m.curve.analysis.regimes.size(); ++i) {
    const ScanRegime& r = m.curve.analysis.regimes[i];
    std::string ranges;
    for (const GridRange& g : r.ranges)
      ranges += (ranges.empty() ? "" : ", ") +
                (g.from == g.to ? RatioLabel(m.rows[g.from])
                                : RatioLabel(m.rows[g.from]) + "-" + RatioLabel(m.rows[g.to]));
    std::string what = r.outcome == Outcome::kPass
                           ? fmt::format(
                                 "pass, overhead {}-{}, {:.2f}-{:.2f} evictions per evicted "
                                 "storage",
                                 ShortDouble(r.overhead_min), ShortDouble(r.overhead_max),
                                 r.per_storage_min, r.per_storage_max)
                           : std::string(OutcomeName(r.outcome));
    out.push_back(fmt::format("R{}: {}; {} run{} (ratios {})", i, what, r.runs,
                              r.runs == 1 ? "" : "s", ranges));
  }
  return out;
}

const BudgetVerdict* VerdictOf(const ReportModel& m, size_t run) {
  if (!m.verdicts) return nullptr;
  for (const BudgetVerdict& v : *m.verdicts)
    if (v.run == run) return &v;
  return nullptr;
}

std::string VerdictLabel(const BudgetVerdict& v) {
  return std::string(VerdictName(v.classification.verdict));
}

std::string CertificateOrReason(const Trace& trace, const BudgetVerdict& v) {
  const Classification& c = v.classification;
  if (c.certificate) return CertificateLine(trace, *c.certificate);
  return fmt::format("{}; static bound: {} bytes", UndeterminedLine(c),
                     GroupedInt(c.static_bound.bytes));
}

std::string VerdictsIntro(const ReportModel& m) {
  if (!m.verdicts) return NotComputed(m.verdicts_skipped);
  int policy = 0, inherent = 0, undetermined = 0;
  for (const BudgetVerdict& v : *m.verdicts) {
    policy += v.classification.verdict == Verdict::kPolicyInduced;
    inherent += v.classification.verdict == Verdict::kInherent;
    undetermined += v.classification.verdict == Verdict::kUndetermined;
  }
  std::string example =
      m.verdicts->empty() ? std::string() : fmt::format(" (`{}`)", m.verdicts->front().command);
  return fmt::format(
      "Each OOM budget was classified as `dtrcheck explain` does{}{}: policy-induced (an eviction "
      "script that the schedule checker passed at this budget exists, so another policy fits), "
      "inherent (a static bound or a Z3 UNSAT window proves no schedule fits) or undetermined. "
      "{} policy-induced, {} inherent, {} undetermined.",
      m.explain_flags.empty() ? std::string(" with its default options")
                              : fmt::format(" with `{}`", m.explain_flags.substr(1)),
      example, policy, inherent, undetermined);
}

std::string DivergenceTitle(const ReportModel& m, const RegimeDivergence& d) {
  return fmt::format("Ratios {} / {} ({})", RatioLabel(m.rows[d.run_a]),
                     RatioLabel(m.rows[d.run_b]), RegimeEdgeName(d.edge));
}

std::string DiffText(const Trace& trace, const ReportModel& m, const RegimeDivergence& d) {
  std::ostringstream text;
  PrintDiffText(text, TraceSummary{m.trace.name, m.trace.baseline}, trace, d.comparison);
  return text.str();
}

std::string DivergenceIntro(const ReportModel& m) {
  if (!m.divergence) return NotComputed(m.divergence_skipped);
  if (m.divergence->empty()) return "All runs are in one regime: no pair to compare.";
  return fmt::format(
      "For each pair of neighbouring budgets in different regimes, what `dtrcheck diff` prints: "
      "the first decision where the runs part ways and why, how many decisions differ after it, "
      "and how often each run re-evicts the same storages. {} pair{}.",
      m.divergence->size(), m.divergence->size() == 1 ? "" : "s");
}

std::string NotComputed(const std::string& reason) {
  return fmt::format("Not computed: {}.", reason);
}

}  // namespace dtr
