#include "reports/report_files.h"

#include <sstream>

#include "model/output_file.h"
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
  PendingDirectory out(dir);
  std::vector<std::string> written;
  for (const auto& [name, text] : files) written.push_back(out.Write(name, text));
  out.Commit();
  return written;
}

}  // namespace dtr
