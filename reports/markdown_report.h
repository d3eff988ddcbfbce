// The report as Markdown (GitHub-flavoured tables), for reading in a terminal
// or a code review: the same sections as the HTML report, without plots.
#pragma once

#include <ostream>

#include "diagnose/report_model.h"

namespace dtr {

// `trace` is the trace the report was built from (it names tensors and operators).
void WriteMarkdownReport(std::ostream& out, const Trace& trace, const BudgetReport& report);
// The report of one heuristic.
void WriteMarkdownReport(std::ostream& out, const Trace& trace, const ReportModel& model);

}  // namespace dtr
