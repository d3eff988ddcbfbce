#include "reports/markdown_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include "diagnose/module_memory.h"
#include "diagnose/pinned_floor.h"
#include "model/attribution.h"
#include "reports/instability_report.h"
#include "reports/number_format.h"
#include "reports/pinned_floor_report.h"
#include "reports/proof_report.h"
#include "reports/report_headline.h"
#include "reports/report_text.h"

namespace dtr {

namespace {

// Table cells must not break the table.
std::string Cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// The stacked memory view as tables: one row per band, top of the stack first.
void WriteStackTables(std::ostream& out, const Trace& trace, const ReportModel& m) {
  fmt::print(out, "{}\n\n", StackSummary(m));
  auto table = [&](const StackedMemory& view, const char* what) {
    int64_t total = 0;
    for (const StackBand& b : view.bands) total += b.byte_steps;
    fmt::print(out, "| {} | most at once (bytes) | share of bytes x steps |\n|---|---:|---:|\n", what);
    for (auto it = view.bands.rbegin(); it != view.bands.rend(); ++it) {
      if (it->peak_bytes == 0) continue;
      fmt::print(out, "| {} | {} | {:.1f}% |\n", Cell(StackBandLabel(trace, view, *it)),
                 GroupedInt(it->peak_bytes),
                 total > 0 ? 100.0 * static_cast<double>(it->byte_steps) / static_cast<double>(total) : 0.0);
    }
    fmt::print(out, "\n");
  };
  table(m.memory_stack.by_storage, "by storage");
  if (m.memory_stack.by_module) table(*m.memory_stack.by_module, "by module");
}

// One heuristic's sections; `level` is the Markdown heading prefix of a section.
void WriteHeuristic(std::ostream& out, const Trace& trace, const ReportModel& m, const std::string& level) {

  fmt::print(out, "{} Budget curve\n\n", level);
  for (const std::string& f : CurveFindings(m)) fmt::print(out, "- {}\n", f);
  fmt::print(out, "\nRegimes (as `dtrcheck scan` groups runs, cliff factor {}):\n\n",
             ShortDouble(m.cliff_factor));
  for (const std::string& r : RegimeLines(m)) fmt::print(out, "- {}\n", r);
  fmt::print(out,
             "\n| ratio | budget (bytes) | result | overhead | regime | verdict | evictions | per "
             "evicted storage | row | same run for budgets in |\n"
             "|---|---:|---|---:|---|---|---:|---:|---|---|\n");
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const BudgetRow& row = m.rows[i];
    const RunResult& r = row.run.result;
    std::string result(OutcomeName(r.outcome));
    if (row.inversion) result += " (inversion)";
    const BudgetVerdict* v = VerdictOf(m, i);
    fmt::print(
        out, "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", RowLabel(row),
        GroupedInt(r.budget), result,
        r.outcome == Outcome::kPass ? fmt::format("{:.4f}", row.run.overhead) : "-",
        RegimeLabel(row), v ? VerdictLabel(*v) : "", GroupedInt(r.evictions()),
        r.distinct_evicted ? fmt::format("{:.2f}", m.curve.points[i].evictions_per_storage()) : "-",
        RowSourceName(row.source), ByteInterval(r.budget_lo, r.budget_hi));
  }
  fmt::print(out,
             "\nOverhead is the final clock over the baseline compute (simrd's definition; the "
             "clock starts "
             "at 1). Evictions count heuristic and eager evictions.\n\n");

  fmt::print(out, "{}# Exact budget atlas\n\n", level);
  for (const std::string& f : AtlasFindings(m)) fmt::print(out, "{}\n\n", f);
  std::vector<std::string> added = AddedRowLines(m);
  for (const std::string& a : added) fmt::print(out, "- {}\n", a);
  if (!added.empty()) fmt::print(out, "\n");
  if (m.curve.exact_inversions && !m.curve.exact_inversions->empty()) {
    const int64_t base = m.trace.baseline.memory;
    fmt::print(out,
               "Feasibility inversions of the atlas (budgets that run out of memory with passing "
               "budgets right below and right above):\n\n| OOM budgets (bytes) | width (bytes) | "
               "ratios | intervals | in the rows |\n|---|---:|---|---:|---|\n");
    for (const AtlasInversion& a : *m.curve.exact_inversions) {
      const ExactInversion& v = a.where;
      fmt::print(out, "| {} | {} | {:.9f} to {:.9f} | {} | {} |\n",
                 ByteInterval(v.first_oom_byte, v.last_oom_byte), GroupedInt(v.oom_width()),
                 static_cast<double>(v.first_oom_byte) / base,
                 static_cast<double>(v.last_oom_byte) / base,
                 v.last_interval - v.first_interval + 1,
                 v.grid_inversion ? fmt::format("inversion {}", *v.grid_inversion + 1)
                                  : std::string("between the rows"));
    }
    fmt::print(out, "\n");
  }

  fmt::print(out, "{} Memory timeline\n\n", level);
  for (const std::string& line : TimelineSummary(m)) fmt::print(out, "{}\n\n", line);
  WriteStackTables(out, trace, m);

  fmt::print(out, "{} Pinned frontier of each OOM\n\n", level);
  if (!m.frontiers) fmt::print(out, "{}\n\n", NotComputed(m.frontiers_skipped));
  if (m.frontiers && m.frontiers->empty()) fmt::print(out, "No run ran out of memory.\n\n");
  if (m.frontiers)
    for (const OomFrontier& f : *m.frontiers) {
      fmt::print(
          out,
          "{}\n\n| depth | operator | tensor | output | locked here | arguments (state, bytes) |\n"
          "|---:|---|---|---:|---:|---|\n",
          FrontierSummary(trace, m, f));
      for (const FrontierFrame& fr : f.frontier.frames) {
        std::string args;
        for (const FrontierArg& a : fr.args)
          args +=
              fmt::format("{}{} ({}, {})", args.empty() ? "" : ", ", trace.tensors[a.tensor].name,
                          ArgStateName(a.state), GroupedInt(trace.storages[a.storage].size));
        fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", fr.depth,
                   Cell(OperatorLabel(trace, trace.tensors[fr.tensor].op)), Cell(trace.tensors[fr.tensor].name),
                   GroupedInt(fr.request), GroupedInt(fr.new_locked_bytes), Cell(args));
      }
      fmt::print(out, "\n");
    }

  fmt::print(out, "{} Verdicts and certificates\n\n{}\n\n", level, VerdictsIntro(m));
  if (m.verdicts && !m.verdicts->empty()) {
    fmt::print(out,
               "| row | budget (bytes) | verdict | certificate | checked | by hand |\n"
               "|---|---:|---|---|---|---|\n");
    for (const BudgetVerdict& v : *m.verdicts) {
      const std::optional<Certificate>& c = v.classification.certificate;
      fmt::print(out, "| {} | {} | {} | {} | {} | `{}` |\n", RowLabel(m.rows[v.run]),
                 GroupedInt(v.classification.budget), VerdictLabel(v),
                 Cell(CertificateOrReason(trace, v)),
                 c ? fmt::format("{} ({})", c->Holds() ? "yes" : "NO", CheckedByName(c->checked_by))
                   : "no",
                 Cell(v.command));
    }
    fmt::print(out, "\n");
  }
  fmt::print(out, "{} Divergence between regimes\n\n{}\n\n", level, DivergenceIntro(m));
  if (m.divergence) {
    for (const RegimeDivergence& d : *m.divergence) {
      fmt::print(out, "{}# {}\n\n{}\n\n`{}`:\n\n```text\n{}```\n\n", level, DivergenceTitle(m, d),
                 DivergenceSummary(trace, d.comparison), d.command, DiffText(trace, m, d));
    }
  }
}

}  // namespace

namespace {

// For a captured trace: what the pinned floor is made of, and what each
// module's operators allocate (diagnose/module_memory.h). Nothing otherwise.
void WriteMemoryByModule(std::ostream& out, const Trace& trace) {
  std::optional<std::vector<ModuleMemory>> modules = MemoryByModule(trace);
  std::optional<PinnedFloor> floor = ExplainPinnedFloor(trace);
  if (!modules && !floor) return;
  fmt::print(out, "## Memory by module\n\n");
  if (floor)
    fmt::print(out,
               "The storages pinned at the end, {} bytes, stay whatever is evicted: {} "
               "(`dtrcheck info` names the largest). DTR evicts only the rest.\n\n",
               GroupedInt(floor->bytes), PinnedFloorLine(*floor));
  if (!modules) return;
  fmt::print(out,
             "What the operators of each module allocate (an alias allocates nothing), the "
             "largest forward first:\n\n"
             "| module | forward operators | forward bytes | forward compute | backward operators | "
             "backward bytes |\n|---|---:|---:|---:|---:|---:|\n");
  constexpr size_t kShown = 20;
  for (size_t i = 0; i < modules->size() && i < kShown; ++i) {
    const ModuleMemory& m = (*modules)[i];
    fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", Cell(m.module.empty() ? "(the model)" : m.module),
               GroupedInt(m.forward_ops), GroupedInt(m.forward_bytes), GroupedInt(m.forward_compute),
               GroupedInt(m.backward_ops), GroupedInt(m.backward_bytes));
  }
  if (modules->size() > kShown)
    fmt::print(out, "\n{} more modules (report.json lists all).\n", modules->size() - kShown);
  fmt::print(out, "\n");
}

}  // namespace

void WriteMarkdownReport(std::ostream& out, const Trace& trace, const BudgetReport& r) {
  const ReportModel& first = r.heuristics.front();
  const TraceFacts& t = first.trace;
  std::string heuristics;
  for (const ReportModel& m : r.heuristics) heuristics += (heuristics.empty() ? "" : ", ") + m.heuristic;
  fmt::print(out, "# dtrcheck report: {}\n\n", t.name);
  fmt::print(out, "{} with {} on {}, ratios `{}`.\n\n", t.source, heuristics, first.runtime,
             first.ratios_text);
  // The answer first (diagnose/budget_headline.h).
  fmt::print(out, "## Answer\n\n");
  for (const ReportModel& m : r.heuristics) {
    if (r.heuristics.size() > 1) fmt::print(out, "{}:\n\n", m.heuristic);
    for (const HeadlineItem& item : HeadlineItems(m.headline))
      fmt::print(out, "- **{}**: {}\n", item.label, item.text);
    fmt::print(out, "\n");
  }
  fmt::print(out, "## Trace and baseline\n\n| | |\n|---|---|\n");
  fmt::print(out, "| operators | {} ({} constants) |\n", GroupedInt(t.operators),
             GroupedInt(t.constants));
  fmt::print(out, "| tensors | {} ({} aliases) |\n", GroupedInt(t.tensors), GroupedInt(t.aliases));
  fmt::print(out, "| storages | {} |\n", GroupedInt(t.storages));
  fmt::print(out, "| program steps | {} |\n", GroupedInt(t.program_steps));
  fmt::print(out, "| baseline memory (peak) | {} bytes ({}) |\n", GroupedInt(t.baseline.memory),
             HumanBytes(t.baseline.memory));
  fmt::print(out, "| baseline compute | {} |\n", GroupedInt(t.baseline.compute));
  fmt::print(out, "| constant memory | {} bytes |\n", GroupedInt(t.baseline.const_memory));
  fmt::print(out, "| bottleneck memory | {} bytes |\n\n", GroupedInt(t.baseline.bottleneck_memory));
  WriteMemoryByModule(out, trace);

  for (const ReportModel& m : r.heuristics) {
    if (r.heuristics.size() > 1) fmt::print(out, "## {}\n\n", m.heuristic);
    WriteHeuristic(out, trace, m, r.heuristics.size() > 1 ? "###" : "##");
  }
}

void WriteMarkdownReport(std::ostream& out, const Trace& trace, const ReportModel& model) {
  WriteMarkdownReport(out, trace, BudgetReport{{model}});
}

}  // namespace dtr
