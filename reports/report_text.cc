#include "reports/report_text.h"

#include <fmt/core.h>

#include "reports/number_format.h"

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
  for (const OomBand& b : m.curve.oom_bands) {
    const BudgetRow& first = m.rows[b.first_run];
    const BudgetRow& last = m.rows[b.last_run];
    std::string where = b.first_run == b.last_run
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
    std::string kind = b.feasible_below && b.feasible_above ? "Feasibility inversion"
                       : b.feasible_above                   ? "OOM below the feasible budgets"
                       : b.feasible_below                   ? "OOM above feasible budgets"
                                                            : "OOM everywhere on the grid";
    std::string edges;
    if (b.feasible_below) edges += b.exact_lower_edge ? " Its lower edge is exact." : "";
    if (b.feasible_above) edges += b.exact_upper_edge ? " Its upper edge is exact." : "";
    out.push_back(
        fmt::format("{}: OOM at {}. Known OOM budgets: {}.{}", kind, where, known, edges));
  }
  for (const Cliff& c : m.curve.cliffs) {
    const BudgetRow& lo = m.rows[c.low_run];
    const BudgetRow& hi = m.rows[c.high_run];
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

std::string FrontierSummary(const ReportModel& m, const OomFrontier& f) {
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
  const OomContext& o = f.oom;
  return fmt::format(
      "Ratios {} ({}): while computing {}, {}. In use {} "
      "(pinned {}, locked {} in {} storages) + request {} = {} bytes, more than any of "
      "these budgets, and nothing was left to evict.",
      ratios, runs, o.program_op,
      o.remat_depth == 0 ? std::string("with no rematerialization pending")
                         : fmt::format("{} rematerialization{} pending below it (innermost: {})",
                                       o.remat_depth, o.remat_depth == 1 ? " was" : "s were", o.op),
      GroupedInt(o.memory_usage), GroupedInt(o.pinned_memory), GroupedInt(o.locked_memory),
      o.locked_storages, GroupedInt(o.request), GroupedInt(o.memory_usage + o.request));
}

}  // namespace dtr
