#include "reports/report_files.h"

#include <filesystem>
#include <optional>
#include <sstream>

#include <fmt/core.h>

#include "model/error.h"
#include "model/output_file.h"
#include "reports/html_report.h"
#include "reports/markdown_report.h"
#include "reports/report_figures.h"
#include "reports/report_json.h"

namespace dtr {

bool CheckFiguresDir(const std::string& dir, const std::string& figures_dir) {
  namespace fs = std::filesystem;
  auto normal = [](const std::string& d) {
    fs::path p = fs::absolute(d).lexically_normal();
    return p.has_filename() ? p : p.parent_path();
  };
  const fs::path a = normal(dir), b = normal(figures_dir);
  if (a == b) return true;
  const fs::path rel = b.lexically_relative(a);
  if (!rel.empty() && *rel.begin() != "..")
    throw Error(fmt::format(
        "--figures {}: inside the report directory {}; give {} itself or a directory outside it",
        figures_dir, dir, dir));
  return false;
}

std::vector<std::string> WriteReportFiles(
    const Trace& trace, const BudgetReport& report, const std::string& dir,
    const std::string& figures_dir, const std::vector<std::pair<std::string, std::string>>& extra) {
  std::ostringstream md, html;
  WriteMarkdownReport(md, trace, report);
  WriteHtmlReport(html, trace, report);
  std::vector<std::pair<std::string, std::string>> files = {
      {"report.json", ReportJson(trace, report).dump(1) + "\n"},
      {"report.md", md.str()},
      {"report.html", html.str()}};
  files.insert(files.end(), extra.begin(), extra.end());
  std::vector<std::pair<std::string, std::string>> figures;
  if (!figures_dir.empty()) {
    for (const Figure& f : CurveFigures(report)) figures.push_back({f.name + ".svg", f.standalone});
    for (size_t k = 0; k < report.heuristics.size(); ++k) {
      Figure t = TimelineFigure(report, k);
      figures.push_back({t.name + ".svg", t.standalone});
      for (const Figure& f : StackFigures(trace, report, k))
        figures.push_back({f.name + ".svg", f.standalone});
      for (const Figure& f : FrontierFigures(trace, report, k))
        figures.push_back({f.name + ".svg", f.standalone});
    }
  }
  // Figures in the report's own directory join its set.
  const bool same_dir = !figures_dir.empty() && CheckFiguresDir(dir, figures_dir);
  if (same_dir) {
    files.insert(files.end(), figures.begin(), figures.end());
    figures.clear();
  }
  PendingDirectory out(dir);
  std::vector<std::string> written;
  for (const auto& [name, text] : files) written.push_back(out.Write(name, text));
  std::optional<PendingDirectory> fig;
  if (!figures_dir.empty() && !same_dir) {
    fig.emplace(figures_dir);
    for (const auto& [name, text] : figures) written.push_back(fig->Write(name, text));
  }
  out.Commit();
  if (fig) fig->Commit();
  return written;
}

std::vector<std::string> WriteReportFiles(const Trace& trace, const ReportModel& model,
                                          const std::string& dir) {
  return WriteReportFiles(trace, BudgetReport{{model}}, dir);
}

}  // namespace dtr
