// Writes a report's files into a directory: report.json (the stable schema
// of docs/report_json.md), report.md and report.html. All are rendered in
// memory, written into a temporary directory beside `dir` and swapped in
// together (model/output_file.h): `dir` ends up holding the whole new report,
// or, after an error or a kill, exactly what it held before. Figures
// (reports/report_figures.h) go the same way into their own directory.
#pragma once

#include <string>
#include <vector>

#include "diagnose/report_model.h"

namespace dtr {

// Creates `dir` if needed; an existing `dir` must hold nothing but report
// files (an earlier report), which are replaced. With `figures_dir`, also
// writes every figure there as NAME.svg (a standalone SVG), under the same
// rules. Returns the paths written. Throws InputError naming the path and
// the reason on I/O failure. `extra` files (name, content) join the report's
// set in `dir` (the demo writes its trace there).
// Whether `figures_dir` is `dir` itself (the figures then join the report's
// set). Throws Error (a usage error) when it lies inside `dir`, which is
// swapped out as a whole.
bool CheckFiguresDir(const std::string& dir, const std::string& figures_dir);

std::vector<std::string> WriteReportFiles(
    const Trace& trace, const BudgetReport& report, const std::string& dir,
    const std::string& figures_dir = "",
    const std::vector<std::pair<std::string, std::string>>& extra = {});
std::vector<std::string> WriteReportFiles(const Trace& trace, const ReportModel& model,
                                          const std::string& dir);

}  // namespace dtr
