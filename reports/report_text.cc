#include "reports/report_text.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "model/attribution.h"
#include "reports/atlas_report.h"
#include "reports/instability_report.h"
#include "reports/number_format.h"
#include "reports/proof_report.h"

namespace dtr {

std::string RowLabel(const BudgetRow& row) {
  return row.run.spec.ratio ? row.run.spec.ratio->text
                            : GroupedInt(row.run.result.budget) + " B";
}

std::string RowPhrase(const BudgetRow& row) {
  return (row.run.spec.ratio ? "ratio " : "budget ") + RowLabel(row);
}

std::string RowsPhrase(const BudgetRow& first, const BudgetRow& last) {
  if (&first == &last || first.run.result.budget == last.run.result.budget)
    return RowPhrase(first);
  if (first.run.spec.ratio && last.run.spec.ratio)
    return fmt::format("ratios {} to {}", RowLabel(first), RowLabel(last));
  return fmt::format("{} to {}", RowPhrase(first), RowPhrase(last));
}

double RowRatio(const ReportModel& m, const BudgetRow& row) {
  return row.run.spec.ratio ? row.run.spec.ratio->value
                            : static_cast<double>(row.run.result.budget) /
                                  static_cast<double>(m.trace.baseline.memory);
}

namespace {

std::string Percent(int64_t bytes, int64_t baseline) {
  return baseline > 0 ? fmt::format("{:.2f}%", 100.0 * static_cast<double>(bytes) /
                                                   static_cast<double>(baseline))
                      : "-";
}

std::string Describe(int64_t lo, int64_t hi, int64_t base) {
  return fmt::format("{} bytes ({} to {} of the baseline)", ByteInterval(lo, hi), Percent(lo, base),
                     hi == kInfiniteBudget ? "inf" : Percent(hi, base));
}

}  // namespace

std::vector<std::string> CurveFindings(const ReportModel& m) {
  std::vector<std::string> out;
  const int64_t base = m.trace.baseline.memory;
  const size_t n = m.rows.size();
  const std::vector<std::pair<int64_t, int64_t>> infeasible =
      m.atlas ? m.atlas->Infeasible() : std::vector<std::pair<int64_t, int64_t>>{};
  for (const OomStretch& b : m.curve.oom_stretches) {
    const BudgetRow& first = m.rows[b.from];
    const BudgetRow& last = m.rows[b.to];
    std::string known;
    if (b.known_oom.size() > 2) {
      known = fmt::format("{} intervals from {} to {}, with gaps not replayed", b.known_oom.size(),
                          Describe(b.known_oom.front().first, b.known_oom.front().second, base),
                          Describe(b.known_oom.back().first, b.known_oom.back().second, base));
    } else {
      for (const auto& [lo, hi] : b.known_oom)
        known += (known.empty() ? "" : ", ") + Describe(lo, hi, base);
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
    // Where the atlas walked the first OOM row's budget, the failing stretch
    // around it is known to the byte: say so instead of the rows' knowledge.
    bool exact = false;
    const int64_t first_budget = first.run.result.budget;
    for (const auto& [lo, hi] : infeasible) {
      if (hi < first_budget || lo > first_budget) continue;
      known = fmt::format("every budget in {} fails ({} bytes wide)", Describe(lo, hi, base),
                          GroupedInt(hi - lo + 1));
      if (last.run.result.budget > hi) {
        int k = 0;
        for (const auto& [l2, h2] : infeasible) k += l2 > hi && l2 <= last.run.result.budget;
        known += fmt::format("; the stretch's higher rows lie in {} more failing stretches", k);
      }
      edges.clear();
      exact = true;
      break;
    }
    out.push_back(fmt::format("{}: OOM at {}. {}{}.{}", kind, RowsPhrase(first, last),
                              exact ? "The atlas: " : "Known OOM budgets: ", known, edges));
  }
  for (const ScanCliff& c : m.curve.analysis.cliffs) {
    const BudgetRow& lo = m.rows[c.lower];
    const BudgetRow& hi = m.rows[c.upper];
    if (CliffIsSharp(m, c))
      out.push_back(fmt::format(
          "Cliff: overhead {} at {} and {} at {} (x{:.2f} between neighbouring feasible budgets).",
          ShortDouble(lo.run.overhead), RowPhrase(lo), ShortDouble(hi.run.overhead), RowPhrase(hi),
          c.factor));
    else
      out.push_back(fmt::format(
          "Overhead change: {} at {} and {} at {} (x{:.2f}; the budgets between were not run, "
          "so it may be gradual).",
          ShortDouble(lo.run.overhead), RowPhrase(lo), ShortDouble(hi.run.overhead), RowPhrase(hi),
          c.factor));
  }
  if (out.empty()) out.push_back("No OOM and no cliff on this grid.");
  return out;
}

std::vector<std::string> TimelineSummary(const ReportModel& m) {
  std::vector<std::string> out;
  if (m.timelines.empty()) return {"No run."};
  out.push_back(fmt::format("Drawn: {}.", m.timeline_selection));
  for (const MemoryTimeline& t : m.timelines) {
    const BudgetRow& row = m.rows[t.run];
    std::string s = fmt::format(
        "{} ({}, budget {} bytes, {}): {} computations, {} of them rematerializations; {} "
        "heuristic and {} eager evictions.",
        t.role, RowPhrase(row), GroupedInt(t.budget), HumanBytes(t.budget), GroupedInt(t.events),
        GroupedInt(t.remat_events), GroupedInt(t.heuristic_evictions),
        GroupedInt(t.eager_evictions));
    if (t.oom)
      s += fmt::format(
          " It ran out of memory at computation {} (program step {}): {} needs {} bytes with {} "
          "in use, over the budget.",
          GroupedInt(t.oom->event), GroupedInt(t.oom->program_step), t.oom->op,
          GroupedInt(t.oom->request), GroupedInt(t.oom->memory_usage));
    else
      s += fmt::format(" It completed with peak memory {} bytes.",
                       GroupedInt(row.run.result.max_memory));
    out.push_back(s);
  }
  if (m.timeline_divergence) {
    const FirstDivergence& d = *m.timeline_divergence;
    const std::optional<DecisionPoint>& p = d.a ? d.a : d.b;
    if (p)
      out.push_back(fmt::format(
          "The two runs make the same {} decisions, then part ways at decision {} (program step "
          "{}, computation {}): {}.",
          d.index, d.index, GroupedInt(p->program_step), GroupedInt(p->event),
          DivergenceKindName(d.kind)));
  }
  return out;
}

std::string StackBandLabel(const Trace& trace, const StackedMemory& view, const StackBand& b) {
  const bool by_module =
      std::any_of(view.bands.begin(), view.bands.end(), [](const StackBand& x) {
        return x.kind == StackBand::Kind::kModule || x.kind == StackBand::Kind::kRole ||
               x.kind == StackBand::Kind::kNoModule;
      });
  switch (b.kind) {
    case StackBand::Kind::kStorage: {
      // A trace without attribution says nothing of a storage but its
      // tensor: name the operator that computed it, too.
      const Storage& st = trace.storages[b.storage];
      const std::string origin = StorageOrigin(trace, b.storage);
      return origin.empty() ? fmt::format("{} from {}, {}", trace.tensors[st.root].name,
                                          trace.op_of(st.root).name, HumanBytes(st.size))
                            : fmt::format("{}, {}", StorageLabel(trace, b.storage), HumanBytes(st.size));
    }
    case StackBand::Kind::kConstants:
      return by_module ? "other constants (pinned)" : "constants (pinned)";
    case StackBand::Kind::kModule:
      return b.module.empty() ? "the model itself (no submodule)" : "module " + b.module;
    case StackBand::Kind::kRole:
      switch (b.role) {
        case RoleKind::kParameter: return "parameters";
        case RoleKind::kGradient: return "gradients";
        case RoleKind::kOptimizer: return "optimizer state";
        case RoleKind::kBuffer: return "buffers";
        case RoleKind::kInput: return "inputs";
      }
      return "";
    case StackBand::Kind::kNoModule:
      return "outside every module";
    case StackBand::Kind::kOther:
      return by_module ? "everything else" : "other storages";
  }
  return "";
}

std::string StackSummary(const ReportModel& m) {
  const MemoryStack& s = m.memory_stack;
  const BudgetRow& row = m.rows[s.run];
  const std::vector<StackColumn>& columns = s.by_storage.columns;
  const int32_t width = columns.empty() ? 1 : columns.front().last_step - columns.front().first_step + 1;
  return fmt::format(
      "Stacked: the run at {} ({}). Each column of {} shows the computation there with the most "
      "memory in use, split by what holds that memory: by storage, the storages that hold the most "
      "over the run (bytes x program steps), the constants and the rest{}.",
      row.run.spec.ratio ? fmt::format("ratio {}, budget {} bytes", row.run.spec.ratio->text,
                                       GroupedInt(s.budget))
                         : fmt::format("budget {} bytes", GroupedInt(s.budget)),
      OutcomeName(s.outcome),
      width == 1 ? std::string("one program step") : fmt::format("about {} program steps", width),
      s.by_module ? "; by module, the module whose operators allocated each storage (forward and "
                    "backward, at the deepest level of module paths with at most seven modules), with "
                    "parameters, gradients and optimizer state apart"
                  : "");
}

std::string FrontierSummary(const Trace& trace, const ReportModel& m, const OomFrontier& f) {
  std::string ratios;
  if (f.runs.size() > 4) {
    ratios = fmt::format("{}, {} rows", RowsPhrase(m.rows[f.runs.front()], m.rows[f.runs.back()]),
                         f.runs.size());
  } else {
    for (size_t i : f.runs) ratios += (ratios.empty() ? "" : ", ") + RowPhrase(m.rows[i]);
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
      "At {} ({}): while computing {}, {}. In use {} "
      "(pinned {}, locked {} in {} storages) + request {} = {} bytes, more than any of "
      "these budgets, and nothing was left to evict.",
      ratios, runs, OperatorLabel(trace, trace.tensors[r.frames.front().tensor].op),
      depth == 0
          ? std::string("with no rematerialization pending")
          : fmt::format("{} rematerialization{} pending below it (innermost: {})", depth,
                        depth == 1 ? " was" : "s were",
                        OperatorLabel(trace, trace.tensors[r.frames.back().tensor].op)),
      GroupedInt(r.memory_usage), GroupedInt(r.pinned_bytes), GroupedInt(r.locked_bytes),
      r.locked.size(), GroupedInt(r.request), GroupedInt(r.memory_usage + r.request));
}

std::vector<std::string> AtlasFindings(const ReportModel& m) {
  std::vector<std::string> out;
  if (!m.atlas) {
    out.push_back(NotComputed(m.atlas_skipped));
    return out;
  }
  const AtlasCoverage& a = *m.atlas;
  const int64_t base = m.trace.baseline.memory;
  const int64_t range = a.hi - a.lo + 1;
  size_t intervals = 0, inversions = 0, missed = 0;
  int64_t feasible = 0, infeasible = 0;
  for (const BudgetAtlas& s : a.sections) {
    intervals += s.intervals.size();
    feasible += s.summary.feasible_width;
    infeasible += s.summary.infeasible_width;
  }
  if (m.curve.exact_inversions)
    for (const AtlasInversion& v : *m.curve.exact_inversions) {
      ++inversions;
      missed += v.where.missed_by_grid();
    }
  if (a.complete()) {
    out.push_back(fmt::format(
        "Every budget from {} to {} bytes was replayed exactly (no sampling), within the cap "
        "of {}: {} intervals of identical runs from {} replays; {} "
        "bytes feasible, {} bytes infeasible, {} feasibility inversion{}{}.",
        GroupedInt(a.lo), GroupedInt(a.hi), AtlasCapText(a.cap, "--atlas-"),
        GroupedInt(static_cast<int64_t>(intervals)), GroupedInt(static_cast<int64_t>(a.replays)),
        GroupedInt(feasible), GroupedInt(infeasible), inversions, inversions == 1 ? "" : "s",
        missed ? fmt::format(" ({} between the rows)", missed) : ""));
  } else {
    std::string sections;
    for (const BudgetAtlas& s : a.sections)
      sections += (sections.empty() ? "" : ", ") + ByteInterval(s.lo, s.hi);
    std::string gaps;
    for (const auto& [lo, hi] : a.Gaps())
      gaps += (gaps.empty() ? "" : ", ") + ByteInterval(lo, hi);
    out.push_back(fmt::format(
        "The atlas reached its cap of {} after {} replays: it covered {} of the range "
        "[{}, {}] bytes ({} of the baseline), walked first where the grid's outcome changes, then "
        "up from the lowest passing budget. Walked exactly (no sampling): {}, {} intervals of "
        "identical runs; {} bytes feasible, {} bytes infeasible, {} feasibility inversion{}{}. "
        "Not walked, known only at the rows: {}.",
        AtlasCapText(a.cap, "--atlas-"), GroupedInt(static_cast<int64_t>(a.replays)),
        Percent(a.covered(), range), GroupedInt(a.lo), GroupedInt(a.hi),
        fmt::format("{} to {}", Percent(a.lo, base), Percent(a.hi, base)), sections,
        GroupedInt(static_cast<int64_t>(intervals)), GroupedInt(feasible), GroupedInt(infeasible),
        inversions, inversions == 1 ? "" : "s",
        missed ? fmt::format(" ({} between the rows)", missed) : "", gaps));
  }
  std::optional<int64_t> smallest, largest_oom;
  for (const BudgetAtlas& s : a.sections) {
    if (!smallest && s.summary.smallest_feasible) smallest = s.summary.smallest_feasible;
    if (s.summary.largest_oom) largest_oom = s.summary.largest_oom;
  }
  std::string extremes;
  if (smallest)
    extremes += fmt::format("The smallest feasible budget walked is {} bytes ({}). ",
                            GroupedInt(*smallest), Percent(*smallest, base));
  if (largest_oom)
    extremes += fmt::format("The largest budget walked that runs out of memory is {} bytes ({}).",
                            GroupedInt(*largest_oom), Percent(*largest_oom, base));
  if (!extremes.empty()) out.push_back(extremes.back() == ' ' ? extremes.substr(0, extremes.size() - 1) : extremes);
  size_t added = 0;
  for (const BudgetRow& r : m.rows) added += r.source != RowSource::kGrid;
  if (added > 0)
    out.push_back(fmt::format("{} row{} added to the grid from what the atlas found (marked "
                              "\"zoom\" and \"edge\" in the table).",
                              added, added == 1 ? " was" : "s were"));
  return out;
}

std::vector<std::string> AddedRowLines(const ReportModel& m) {
  // What an added row is about: the hole or cliff its reason names
  // (grid_refinement.h words each reason as "<role> the <thing>").
  auto about = [](const std::string& reason) {
    size_t at = reason.find(" the ");
    return at == std::string::npos ? reason : reason.substr(at + 5);
  };
  std::vector<std::string> keys;
  std::map<std::string, std::vector<size_t>> rows;
  for (size_t i = 0; i < m.rows.size(); ++i) {
    if (m.rows[i].source == RowSource::kGrid) continue;
    std::string key = std::string(RowSourceName(m.rows[i].source)) + ":" + about(m.rows[i].source_reason);
    if (!rows.count(key)) keys.push_back(key);
    rows[key].push_back(i);
  }
  std::vector<std::string> out;
  for (const std::string& key : keys) {
    const std::vector<size_t>& group = rows[key];
    std::string labels;
    for (size_t i : group) labels += (labels.empty() ? "" : ", ") + RowLabel(m.rows[i]);
    const BudgetRow& first = m.rows[group.front()];
    std::string what = first.source_reason;
    if (group.size() > 1 && first.source == RowSource::kEdge)
      what = "edge bytes of the " + about(first.source_reason);
    out.push_back(fmt::format("{}: {}", labels, what));
  }
  return out;
}

bool CliffIsSharp(const ReportModel& m, const ScanCliff& c) {
  if (c.boundary) return c.boundary->sharp();
  return m.rows[c.lower].run.result.budget_hi + 1 == m.rows[c.upper].run.result.budget_lo;
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
                (g.from == g.to ? RowLabel(m.rows[g.from])
                                : RowLabel(m.rows[g.from]) + "-" + RowLabel(m.rows[g.to]));
    std::string what = r.outcome == Outcome::kPass
                           ? fmt::format(
                                 "pass, overhead {}-{}, {:.2f}-{:.2f} evictions per evicted "
                                 "storage",
                                 ShortDouble(r.overhead_min), ShortDouble(r.overhead_max),
                                 r.per_storage_min, r.per_storage_max)
                           : std::string(OutcomeName(r.outcome));
    out.push_back(fmt::format("R{}: {}; {} run{} (rows {})", i, what, r.runs,
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
             "Each OOM budget was classified as `dtrcheck explain` does{}{}: policy-induced (an "
             "eviction "
             "script that the schedule checker passed at this budget exists, so another policy "
             "fits), "
             "inherent (a static bound or a Z3 UNSAT window proves no schedule fits) or "
             "undetermined. "
             "{} policy-induced, {} inherent, {} undetermined.",
             m.explain_flags.empty() ? std::string(" with its default options")
                                     : fmt::format(" with `{}`", m.explain_flags.substr(1)),
             example, policy, inherent, undetermined) +
         (m.verdicts_capped
              ? fmt::format(" {} more OOM budget{} left without a verdict: the report classifies "
                            "at most {}{} "
                            "(the highest OOM budget of each failing stretch first; more with "
                            "`--max-verdicts N`, or run explain on a budget).",
                            m.verdicts_capped, m.verdicts_capped == 1 ? " was" : "s were",
                            m.max_verdicts,
                            m.verdict_evals
                                ? fmt::format(", and only while {} replays per verdict at its "
                                              "OOM run's cost stay within {} heuristic evaluations",
                                              kReplaysPerVerdict, GroupedInt(m.verdict_evals))
                                : std::string())
              : std::string());
}

std::string DivergenceTitle(const ReportModel& m, const RegimeDivergence& d) {
  return fmt::format("{} / {} ({})", RowLabel(m.rows[d.run_a]),
                     RowLabel(m.rows[d.run_b]), RegimeEdgeName(d.edge));
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

std::string ReportPlan(const ReportOptions& o, const ReportCaps& caps) {
  std::string plan = fmt::format("report: grid {} ({} budgets)", o.ratios_text, o.ratios.size());
  if (o.atlas)
    plan += fmt::format("; exact atlas within {}", AtlasCapText(o.atlas_cap, "--atlas-"));
  if (o.verdicts) {
    plan += o.max_verdicts ? fmt::format("; verdicts for at most {} OOM budget{}{}", o.max_verdicts,
                                         o.max_verdicts == 1 ? "" : "s",
                                         o.max_verdicts == caps.verdicts ? "" : " (--max-verdicts)")
                           : std::string("; a verdict for every OOM budget");
    if (o.verdict_evals)
      plan += fmt::format(" within about {} heuristic evaluations of their replays",
                          GroupedInt(o.verdict_evals));
  }
  if (o.verdicts && caps.verdicts && o.max_verdicts == caps.verdicts)
    plan += fmt::format(" (sized to the trace: {} storages x steps; --max-verdicts raises it)",
                        GroupedInt(caps.replay_cost));
  if (o.atlas || o.verdicts || o.divergence) plan += ". Quicker: --no-atlas --no-proofs --no-divergence.";
  return plan;
}

std::string NotComputed(const std::string& reason) {
  return fmt::format("Not computed: {}.", reason);
}

}  // namespace dtr
