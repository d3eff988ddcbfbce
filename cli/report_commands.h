// `dtrcheck report [TRACE] --ratios A:B:STEP --out DIR`: the budget report as
// JSON, Markdown and self-contained HTML. Without TRACE, the embedded demo.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "api/front_door.h"

namespace dtr::cli {

struct ReportFlags {
  std::string trace;  // "": the embedded demo
  api::ReportRequest request;
};
void AddReportFlags(CLI::App* cmd, ReportFlags& f);
int RunReport(const ReportFlags& f);

}  // namespace dtr::cli
