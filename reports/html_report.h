// The report as one self-contained HTML page: inline CSS and inline SVG
// plots (reports/svg_plot.h), no script, no external resource of any kind, so
// it opens offline and can be mailed or attached as a single file.
#pragma once

#include <ostream>

#include "diagnose/report_model.h"

namespace dtr {

// `trace` is the trace the model was built from (it names tensors and operators).
void WriteHtmlReport(std::ostream& out, const Trace& trace, const ReportModel& model);

}  // namespace dtr
