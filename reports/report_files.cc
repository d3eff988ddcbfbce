#include "reports/report_files.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/error.h"
#include "reports/html_report.h"
#include "reports/markdown_report.h"
#include "reports/report_json.h"

namespace dtr {

std::vector<std::string> WriteReportFiles(const Trace& trace, const ReportModel& model,
                                          const std::string& dir) {
  std::ostringstream md, html;
  WriteMarkdownReport(md, trace, model);
  WriteHtmlReport(html, trace, model);
  std::vector<std::pair<std::string, std::string>> files = {
      {"report.json", ReportJson(trace, model).dump(1) + "\n"},
      {"report.md", md.str()},
      {"report.html", html.str()}};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw InputError(
        fmt::format("{}: cannot create the report directory ({})", dir, ec.message()));
  std::vector<std::string> written;
  for (const auto& [name, text] : files) {
    std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path, std::ios::binary);
    if (!out) throw InputError(SystemErrorMessage(path, "cannot open for writing"));
    out << text;
    out.close();
    if (!out) throw InputError(SystemErrorMessage(path, "write failed"));
    written.push_back(path);
  }
  return written;
}

}  // namespace dtr
