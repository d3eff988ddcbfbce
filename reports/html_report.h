// The report as one self-contained HTML page: inline CSS and inline SVG
// figures (reports/report_figures.h), no script, no external resource of any
// kind, so it opens offline and can be mailed or attached as a single file.
// Nothing on it scrolls or is clipped: every table row is on the page, long
// cells wrap, and a print style sheet lays it out on A4 landscape.
#pragma once

#include <ostream>

#include "diagnose/report_model.h"

namespace dtr {

// `trace` is the trace the report was built from (it names tensors and operators).
void WriteHtmlReport(std::ostream& out, const Trace& trace, const BudgetReport& report);
// The report of one heuristic.
void WriteHtmlReport(std::ostream& out, const Trace& trace, const ReportModel& model);

}  // namespace dtr
