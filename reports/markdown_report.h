// The report as Markdown (GitHub-flavoured tables), for reading in a terminal
// or a code review: the same sections as the HTML report, without plots.
#pragma once

#include <ostream>

#include "reports/report_model.h"

namespace dtr {

void WriteMarkdownReport(std::ostream& out, const ReportModel& model);

}  // namespace dtr
