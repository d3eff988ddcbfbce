// Writes a report's three files into a directory: report.json (the stable
// schema of docs/report_json.md), report.md and report.html. All three are
// rendered in memory, written into a temporary directory beside `dir` and
// swapped in together (model/output_file.h): `dir` ends up holding the whole
// new report, or, after an error or a kill, exactly what it held before.
#pragma once

#include <string>
#include <vector>

#include "diagnose/report_model.h"

namespace dtr {

// Creates `dir` if needed; an existing `dir` must hold nothing but report
// files (an earlier report), which are replaced. Returns the paths written.
// Throws InputError naming the path and the reason on I/O failure.
std::vector<std::string> WriteReportFiles(const Trace& trace, const ReportModel& model,
                                          const std::string& dir);

}  // namespace dtr
