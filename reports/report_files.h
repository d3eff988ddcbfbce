// Writes a report's three files into a directory: report.json (the stable
// schema of docs/report_json.md), report.md and report.html. All three are
// rendered in memory first, so an error leaves no partial report behind.
#pragma once

#include <string>
#include <vector>

#include "diagnose/report_model.h"

namespace dtr {

// Creates `dir` if needed; returns the paths written. Throws Error on I/O failure.
std::vector<std::string> WriteReportFiles(const Trace& trace, const ReportModel& model,
                                          const std::string& dir);

}  // namespace dtr
