// Sentences shared by the Markdown and HTML reports, so that both say the
// same thing about the same model.
#pragma once

#include <string>
#include <vector>

#include "reports/report_model.h"

namespace dtr {

std::string RatioLabel(const BudgetRow& row);  // the ratio as written on the grid, or "-"
// One sentence per OOM band, inversion and cliff, in budget order.
std::vector<std::string> CurveFindings(const ReportModel& model);
// Why the timeline run was selected and what happened in it.
std::string TimelineSummary(const ReportModel& model);
// The headline of an OOM frontier: how the chain exceeds the budget.
std::string FrontierSummary(const ReportModel& model, const OomFrontier& frontier);
// What the exact atlas found: its coverage, then one sentence per feasibility
// hole (exact widths); or why it is absent or incomplete.
std::vector<std::string> AtlasFindings(const ReportModel& model);
// The regime of a row as shown in tables: "R0", "R1", ... (the numbering of `dtrcheck scan`).
std::string RegimeLabel(const BudgetRow& row);
// One line per regime: "R0: pass, overhead 1.23-1.25, 2.1-2.3 evictions per storage, 14 runs".
std::vector<std::string> RegimeLines(const ReportModel& model);
// The verdict of row `run`, or nullptr if it has none.
const BudgetVerdict* VerdictOf(const ReportModel& model, size_t run);
// The certificate line, or for an undetermined verdict what was tried.
std::string CertificateOrReason(const BudgetVerdict& v);
// The header paragraph of the verdicts section: what was run, with which
// options, how to redo one by hand; and a count per verdict.
std::string VerdictsIntro(const ReportModel& model);
// The header paragraph of the divergence section.
std::string DivergenceIntro(const ReportModel& model);
// "Not computed: REASON." for an absent optional section.
std::string NotComputed(const std::string& reason);

}  // namespace dtr
