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
inline constexpr const char* kNotComputedVerdicts =
    "Not computed in this version: verdicts (policy-induced / inherent OOM) with checked "
    "certificates come from "
    "the OOM classification analysis, which this report does not run yet.";
inline constexpr const char* kNotComputedDivergence =
    "Not computed in this version: the first decision where neighbouring regimes diverge comes "
    "from the "
    "instability analysis, which this report does not run yet.";

}  // namespace dtr
