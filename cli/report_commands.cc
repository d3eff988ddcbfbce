#include "cli/report_commands.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "checker/heuristic.h"
#include "checker/ratio_grid.h"
#include "cli/flag_ranges.h"
#include "cli/progress.h"
#include "cli/replay_flags.h"
#include "diagnose/certificate_store.h"
#include "diagnose/report_model.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "reports/report_files.h"
#include "reports/report_text.h"
#include "traces/demo.h"

namespace dtr::cli {

namespace {

constexpr const char* kDefaultTraceRatios = "0.1:1.0:0.05";

}  // namespace

namespace {

// The console summary of one heuristic's part of the report.
void PrintSummary(const ReportModel& model) {
  fmt::print("{}: {} with {} on {}, {} budgets\n", model.trace.name, model.ratios_text,
             model.heuristic, model.runtime, model.rows.size());
  for (const std::string& finding : CurveFindings(model)) fmt::print("  {}\n", finding);
  for (const std::string& finding : AtlasFindings(model)) fmt::print("  Atlas: {}\n", finding);
  for (const std::string& added : AddedRowLines(model)) fmt::print("    added: {}\n", added);
  if (model.curve.exact_inversions)
    for (const AtlasInversion& a : *model.curve.exact_inversions)
      fmt::print("    inversion: OOM [{}, {}], {} bytes{}\n", a.where.first_oom_byte,
                 a.where.last_oom_byte, a.where.oom_width(),
                 a.where.missed_by_grid() ? " (between the rows)" : "");
  if (model.verdicts) {
    std::map<std::string, int> counts;
    for (const BudgetVerdict& v : *model.verdicts) ++counts[VerdictLabel(v)];
    std::string list;
    for (const auto& [verdict, n] : counts) list += fmt::format(", {} {}", n, verdict);
    fmt::print("  Verdicts: {} OOM budgets{}\n", model.verdicts->size(), list);
    // Neighbouring rows with the same verdict on one line.
    const std::vector<BudgetVerdict>& vs = *model.verdicts;
    for (size_t i = 0; i < vs.size();) {
      size_t j = i;
      while (j + 1 < vs.size() && vs[j + 1].run == vs[j].run + 1 &&
             vs[j + 1].classification.verdict == vs[i].classification.verdict)
        ++j;
      std::string rows = RowLabel(model.rows[vs[i].run]);
      if (j > i) rows += " to " + RowLabel(model.rows[vs[j].run]);
      fmt::print("    {}: {} ({} budget{})\n", rows, VerdictLabel(vs[i]), j - i + 1,
                 j > i ? "s" : "");
      i = j + 1;
    }
  } else {
    fmt::print("  Verdicts: {}\n", NotComputed(model.verdicts_skipped));
  }
  if (model.divergence) {
    fmt::print("  Divergence: {} pair{} of neighbouring budgets in different regimes\n",
               model.divergence->size(), model.divergence->size() == 1 ? "" : "s");
    for (const RegimeDivergence& d : *model.divergence)
      fmt::print("    {} / {} ({}): first divergent decision {}\n", RowLabel(model.rows[d.run_a]),
                 RowLabel(model.rows[d.run_b]), RegimeEdgeName(d.edge), d.comparison.first.index);
  } else {
    fmt::print("  Divergence: {}\n", NotComputed(model.divergence_skipped));
  }
}

}  // namespace

int RunReport(const ReportFlags& f) {
  ReportOptions o;
  for (const std::string& h : f.heuristics) o.heuristics.push_back(&FindHeuristic(h));
  o.heuristic = o.heuristics.front();
  o.runtime = ParseRuntime(f.runtime);
  o.overhead_limit = OverheadLimit(f.overhead_limit);
  o.cliff_factor = f.cliff_factor;
  o.jobs = f.jobs;
  o.atlas = !f.no_atlas;
  o.atlas_max_runs = f.atlas_max_runs;
  o.refine = !f.no_refine;
  o.verdicts = !f.no_proofs;
  o.divergence = !f.no_divergence;
  o.verdict_options = {f.z3, f.timeout, f.work_limit, f.windows, f.window_ops, !f.no_cut};
  Trace trace;
  // The demo trace is written beside the report, so that the report's
  // `dtrcheck explain` / `diff` commands have a file to read.
  std::vector<std::pair<std::string, std::string>> extra;
  if (f.trace.empty()) {
    o.trace_name = kDemoTraceName;
    o.trace_source = kDemoSource;
    extra.push_back({"demo.log", GenerateDemo()});
    o.command_trace = (std::filesystem::path(f.out) / "demo.log").string();
    o.ratios_text = f.ratios.empty() ? DemoRatios() : f.ratios;
    trace = ParseTraceString(extra.back().second, "demo");
  } else {
    o.trace_name = std::filesystem::path(f.trace).filename().string();
    o.trace_source = f.trace;
    o.ratios_text = f.ratios.empty() ? kDefaultTraceRatios : f.ratios;
    trace = LoadTrace(f.trace);
  }
  std::unique_ptr<CertificateStore> store;
  const std::string store_dir = StoreDirectory(f.store);
  if (!store_dir.empty() && !f.trace.empty()) {
    store = std::make_unique<CertificateStore>(store_dir, f.trace, trace,
                                               ComputeBaseline(trace).memory);
    o.stored = store->Find(o.runtime);
    o.store_path = store_dir;
  }
  o.ratios = ParseRatios(o.ratios_text);
  if (!f.figures.empty()) CheckFiguresDir(f.out, f.figures);
  if (!f.timeline_ratio.empty()) o.timeline_ratio = ParseRatio(f.timeline_ratio);
  BudgetReport report;
  {
    // One bar per stage; the atlas counts replays of its budget, the others runs.
    std::unique_ptr<ProgressBar> bar;
    std::string stage;
    o.stage = [&](const std::string& s) {
      bar.reset();
      bar = std::make_unique<ProgressBar>("report: " + s);
      stage = s;
    };
    o.progress = [&](size_t d, size_t t) {
      if (!bar) return;
      if (stage.size() >= 5 && stage.compare(stage.size() - 5, 5, "atlas") == 0)
        bar->UpdatePercent(d, t, fmt::format("of the atlas's {} replays (--atlas-max-runs)", t));
      else
        bar->Update(d, t);
    };
    report = BuildBudgetReport(trace, o);
  }
  std::vector<std::string> paths = WriteReportFiles(trace, report, f.out, f.figures, extra);
  for (const ReportModel& model : report.heuristics) PrintSummary(model);
  for (const std::string& p : paths) fmt::print("wrote {}\n", p);
  return 0;
}

void AddReportFlags(CLI::App* cmd, ReportFlags& f) {
  cmd->add_option("trace", f.trace,
                  "DTR execution log (default: the embedded demo trace, `dtrcheck gen demo`)")
      ->type_name("FILE");
  cmd->add_option(
         "--ratios", f.ratios,
         fmt::format(
             "A:B:STEP (decimal grid) or r1,r2,... (default: {} for a trace, {} for the demo)",
             kDefaultTraceRatios, DemoRatios()))
      ->type_name("GRID")
      ->check(RatioGridText());
  cmd->add_option("-o,--out", f.out, "output directory (created if needed)")
      ->capture_default_str()
      ->type_name("DIR");
  cmd->add_option("--figures", f.figures,
                  "also write each figure as a standalone SVG file into DIR (curve.svg, "
                  "zoom-a.svg, timeline.svg, frontier-1.svg, ...)")
      ->type_name("DIR");
  cmd->add_option("--heuristic", f.heuristics,
                  fmt::format("eviction heuristic(s), simrd's names, comma-separated: one report "
                              "part each, overlaid on the budget curve (default DTR): {}",
                              HeuristicNameList()))
      ->delimiter(',')
      ->type_name("NAME,...");
  AddRuntimeFlag(cmd, f.runtime);
  AddOverheadLimitFlag(cmd, f.overhead_limit);
  cmd->add_option("--timeline-ratio", f.timeline_ratio,
                  "draw the memory timeline of this run alone (default: the last pass and the "
                  "first OOM around the first inversion)")
      ->type_name("RATIO")
      ->check(RatioText());
  AddCliffFactorFlag(cmd, f.cliff_factor,
                     "overhead jump between neighbouring budgets called a cliff (default 1.25)");
  AddJobsFlag(cmd, f.jobs);
  cmd->add_flag("--no-atlas", f.no_atlas,
                "do not walk the exact budget atlas over the grid's range (as `dtrcheck atlas`)");
  cmd->add_option("--atlas-max-runs", f.atlas_max_runs,
                  "the atlas's budget: it walks the grid's range, most telling windows first, "
                  "until it has made this many replays, and says what it covered (default 1000; "
                  "a count, not a time, so the report is the same on any machine)")
      ->check(IntegerIn(1, 1000000000));
  cmd->add_flag("--no-refine", f.no_refine,
                "keep exactly the grid: add no rows where the atlas found inversions and cliffs");
  cmd->add_flag("--no-proofs", f.no_proofs,
                "no verdicts: skip `explain`'s classification of each OOM budget");
  cmd->add_flag("--no-divergence", f.no_divergence,
                "skip `diff` between neighbouring budgets in different regimes");
  CLI::Option* z3 = cmd->add_flag(
      "--z3", f.z3,
      "verdicts: also ask Z3 (witness plans and inherent-proof windows, explain's defaults); "
      "slower, and its answers depend on the solver's limits (--timeout, --work-limit)");
  // Each of these four needs --z3; CLI11 says so in --help ("Needs: --z3").
  AddTimeoutFlag(cmd, f.timeout);
  AddWorkLimitFlag(cmd, f.work_limit);
  AddWindowsFlag(cmd, f.windows, "Z3 windows tried for an inherent proof (default 6)");
  AddWindowOpsFlag(cmd, f.window_ops);
  for (const char* name : {"--timeout", "--work-limit", "--windows", "--window-ops"})
    cmd->get_option(name)->needs(z3);
  cmd->add_flag("--no-cut", f.no_cut,
                "verdicts: do not try the keep-or-recompute cut for an inherent proof");
  cmd->add_option("--store", f.store,
                  "verdicts: certificate store directory (docs/certificate_store.md; default "
                  "$DTRCHECK_STORE; not used for the demo): stored schedules and bounds, checked "
                  "again at each budget")
      ->type_name("DIR");
}

}  // namespace dtr::cli
