// Sentences shared by the Markdown and HTML reports, so that both say the
// same thing about the same model. They describe what the model holds; none
// of them decides what is a cliff, an inversion, a regime or a frontier.
#pragma once

#include <string>
#include <vector>

#include "diagnose/report_model.h"
#include "model/trace.h"

namespace dtr {

// The row as written on the grid ("0.102"), or its budget for a row at a
// byte budget ("1,069,692,896 B").
std::string RowLabel(const BudgetRow& row);
// "ratio 0.102" or "budget 1,069,692,896 B".
std::string RowPhrase(const BudgetRow& row);
// "ratios 0.102 to 0.106", or for rows not both on a ratio grid
// "budget 1,069,692,896 B to budget 1,069,693,023 B"; one row: RowPhrase.
std::string RowsPhrase(const BudgetRow& first, const BudgetRow& last);
// The row's ratio (budget / baseline memory for a byte row).
double RowRatio(const ReportModel& model, const BudgetRow& row);
// One sentence per OOM stretch (saying whether it is a feasibility
// inversion) and per cliff, in budget order.
std::vector<std::string> CurveFindings(const ReportModel& model);
// Why the timeline runs were selected and what happened in each, and where
// two of them part ways.
std::vector<std::string> TimelineSummary(const ReportModel& model);
// How a band of the stacked memory view is named: "x91 (module layer1.0.conv1,
// resnet.py:92), 1.2 MB", "constants (pinned)", "module layer1",
// "parameters", "other storages", ...
std::string StackBandLabel(const Trace& trace, const StackedMemory& view, const StackBand& band);
// What the stacked memory view shows: which run, how it was sampled, what
// the bands are.
std::string StackSummary(const ReportModel& model);
// The headline of an OOM frontier: how the chain exceeds the budget.
std::string FrontierSummary(const Trace& trace, const ReportModel& model,
                            const OomFrontier& frontier);
// What the exact atlas found: how it was walked, what it covered (and, when
// its budget ran out, what it did not), its feasibility inversions and the
// rows added from it; or why it is absent.
std::vector<std::string> AtlasFindings(const ReportModel& model);
// One line per hole or cliff rows were added for, in order of the first
// such row: "0.101, 0.102, ..., 0.107: zoom grid over the OOM budgets [a, b]
// the grid stepped over", "a B, b B, c B, d B: edge bytes of the OOM
// budgets [b, c] the grid stepped over".
std::vector<std::string> AddedRowLines(const ReportModel& model);
// Whether a cliff of the rows lies between budgets that are neighbours to
// the byte (its boundary located sharply, or the rows' intervals touch); a
// jump between rows with budgets not run between them may be gradual.
bool CliffIsSharp(const ReportModel& model, const ScanCliff& cliff);
// The regime of a row as shown in tables: "R0", "R1", ... (the numbering of `dtrcheck scan`).
std::string RegimeLabel(const BudgetRow& row);
// One line per regime: "R0: pass, overhead 1.23-1.25, 2.1-2.3 evictions per storage, 14 runs".
std::vector<std::string> RegimeLines(const ReportModel& model);
// The verdict of row `run`, or nullptr if it has none.
const BudgetVerdict* VerdictOf(const ReportModel& model, size_t run);
// The verdict's name ("policy-induced", ...).
std::string VerdictLabel(const BudgetVerdict& v);
// The certificate line, or for an undetermined verdict what was tried.
std::string CertificateOrReason(const Trace& trace, const BudgetVerdict& v);
// The header paragraph of the verdicts section: what was run, with which
// options, how to redo one by hand; and a count per verdict.
std::string VerdictsIntro(const ReportModel& model);
// The header of one divergence: "Ratios A / B (edge)".
std::string DivergenceTitle(const ReportModel& model, const RegimeDivergence& d);
// What `dtrcheck diff` prints for the pair, verbatim.
std::string DiffText(const Trace& trace, const ReportModel& model, const RegimeDivergence& d);
// The header paragraph of the divergence section.
std::string DivergenceIntro(const ReportModel& model);
// What a report with these options will do, in one line, said before it
// starts: the grid, the atlas's and the verdicts' caps (and that they are
// sized to the trace when they are `caps`), and how to go further or quicker.
std::string ReportPlan(const ReportOptions& options, const ReportCaps& caps);
// "Not computed: REASON." for an absent optional section.
std::string NotComputed(const std::string& reason);

}  // namespace dtr
