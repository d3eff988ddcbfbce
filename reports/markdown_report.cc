#include "reports/markdown_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include "reports/number_format.h"
#include "reports/report_text.h"

namespace dtr {

namespace {

// Table cells must not break the table.
std::string Cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

void WriteMarkdownReport(std::ostream& out, const ReportModel& m) {
  const TraceFacts& t = m.trace;
  fmt::print(out, "# dtrcheck report: {}\n\n", t.name);
  fmt::print(out, "{} with {} on {}, ratios `{}`.\n\n", t.source, m.heuristic, m.runtime,
             m.ratios_text);

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

  fmt::print(out, "## Budget curve\n\n");
  for (const std::string& f : CurveFindings(m)) fmt::print(out, "- {}\n", f);
  fmt::print(out, "\nRegimes (as `dtrcheck scan` groups runs, cliff factor {}):\n\n",
             ShortDouble(m.cliff_factor));
  for (const std::string& r : RegimeLines(m)) fmt::print(out, "- {}\n", r);
  fmt::print(out,
             "\n| ratio | budget (bytes) | result | overhead | regime | verdict | evictions | per "
             "evicted storage | same run for budgets in |\n"
             "|---|---:|---|---:|---|---|---:|---:|---|\n");
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const BudgetRow& row = m.rows[i];
    const RunResult& r = row.run.result;
    std::string result(OutcomeName(r.outcome));
    if (row.inversion) result += " (inversion)";
    const BudgetVerdict* v = VerdictOf(m, i);
    fmt::print(out, "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", RatioLabel(row),
               GroupedInt(r.budget), result,
               r.outcome == Outcome::kPass ? fmt::format("{:.4f}", row.run.overhead) : "-",
               RegimeLabel(row), v ? v->verdict : "", GroupedInt(r.evictions()),
               r.distinct_evicted ? fmt::format("{:.2f}", row.evictions_per_evicted_storage) : "-",
               ByteInterval(r.budget_lo, r.budget_hi));
  }
  fmt::print(out,
             "\nOverhead is the final clock over the baseline compute (simrd's definition; the "
             "clock starts "
             "at 1). Evictions count heuristic and eager evictions.\n\n");

  fmt::print(out, "### Exact budget atlas\n\n");
  for (const std::string& f : AtlasFindings(m)) fmt::print(out, "{}\n\n", f);
  if (m.atlas && !m.atlas->atlas.summary.holes.empty()) {
    const int64_t base = m.trace.baseline.memory;
    fmt::print(out,
               "Feasibility holes (budgets that fail with feasible budgets right below and "
               "right above):\n\n| budgets (bytes) | width (bytes) | ratios | outcome | "
               "intervals |\n|---|---:|---|---|---:|\n");
    for (const FeasibilityHole& h : m.atlas->atlas.summary.holes)
      fmt::print(out, "| {} | {} | {:.9f} to {:.9f} | {} | {} |\n", ByteInterval(h.lo, h.hi),
                 GroupedInt(h.width()), static_cast<double>(h.lo) / base,
                 static_cast<double>(h.hi) / base,
                 h.has_oom && h.has_thrash ? "oom and thrash"
                 : h.has_thrash            ? "thrash"
                                           : "oom",
                 h.last - h.first + 1);
    fmt::print(out, "\n");
  }

  fmt::print(out, "## Memory timeline\n\n{}\n\n", TimelineSummary(m));

  fmt::print(out, "## Pinned frontier of each OOM\n\n");
  if (m.frontiers.empty()) fmt::print(out, "No run ran out of memory.\n\n");
  for (const OomFrontier& f : m.frontiers) {
    fmt::print(
        out,
        "{}\n\n| depth | operator | tensor | output | locked here | arguments (state, bytes) |\n"
        "|---:|---|---|---:|---:|---|\n",
        FrontierSummary(m, f));
    for (const ReportFrame& fr : f.frames) {
      std::string args;
      for (const FrontierArg& a : fr.args)
        args += fmt::format("{}{} ({}, {})", args.empty() ? "" : ", ", a.tensor, a.state,
                            GroupedInt(a.storage_size));
      fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", fr.depth, Cell(fr.op), Cell(fr.tensor),
                 GroupedInt(fr.output_size), GroupedInt(fr.locked_bytes), Cell(args));
    }
    fmt::print(out, "\n");
  }

  fmt::print(out, "## Verdicts and certificates\n\n{}\n\n", VerdictsIntro(m));
  if (m.verdicts && !m.verdicts->empty()) {
    fmt::print(out,
               "| ratio | budget (bytes) | verdict | certificate | checked | by hand |\n"
               "|---|---:|---|---|---|---|\n");
    for (const BudgetVerdict& v : *m.verdicts)
      fmt::print(out, "| {} | {} | {} | {} | {} | `{}` |\n", RatioLabel(m.rows[v.run]),
                 GroupedInt(v.classification.budget), v.verdict, Cell(CertificateOrReason(v)),
                 v.certificate_checked ? "yes" : "no", Cell(v.command));
    fmt::print(out, "\n");
  }
  fmt::print(out, "## Divergence between regimes\n\n{}\n\n", DivergenceIntro(m));
  if (m.divergence) {
    for (const RegimeDivergence& d : *m.divergence) {
      fmt::print(out, "### Ratios {} / {} ({})\n\n{}\n\n`{}`:\n\n```text\n{}```\n\n",
                 RatioLabel(m.rows[d.run_a]), RatioLabel(m.rows[d.run_b]), d.edge, d.summary,
                 d.command, d.text);
    }
  }
}

}  // namespace dtr
