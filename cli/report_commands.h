// `dtrcheck report [TRACE] --ratios A:B:STEP --out DIR`: the budget report as
// JSON, Markdown and self-contained HTML. Without TRACE, the embedded demo.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dtr::cli {

struct ReportFlags {
  std::string trace;  // "": the embedded demo
  std::string ratios;
  std::string out = "out/report";
  std::vector<std::string> heuristics{"DTR"};
  std::string figures;  // "": no standalone figures
  std::string runtime = "RuntimeV2EagerOptimized";
  double overhead_limit = 0;
  std::string timeline_ratio;
  double cliff_factor = 1.25;
  int jobs = 0;
  bool no_atlas = false;
  size_t atlas_max_runs = 1000;  // diagnose/report_model.h kDefaultAtlasReplays
  bool no_refine = false;
  bool no_proofs = false;
  bool no_divergence = false;
  // The verdicts' options (diagnose/report_model.h VerdictOptions): no Z3
  // unless --z3, then explain's defaults.
  bool z3 = false;
  double timeout = 10;
  uint32_t work_limit = 0;
  int32_t windows = 6;
  int32_t window_ops = 6;
  bool no_cut = false;
  std::string store;  // certificate store directory ("": $DTRCHECK_STORE, else none)
};
void AddReportFlags(CLI::App* cmd, ReportFlags& f);
int RunReport(const ReportFlags& f);

}  // namespace dtr::cli
