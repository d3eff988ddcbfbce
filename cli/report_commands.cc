// `dtrcheck report [TRACE] --ratios A:B:STEP --out DIR`: the budget report as
// JSON, Markdown and self-contained HTML. Without TRACE, the embedded demo.
#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "checker/heuristic.h"
#include "checker/ratio_grid.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "diagnose/certificate_store.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "reports/report_files.h"
#include "reports/report_model.h"
#include "reports/report_text.h"
#include "traces/demo.h"

namespace dtr::cli {

namespace {

constexpr const char* kDefaultTraceRatios = "0.1:1.0:0.05";

struct ReportFlags {
  std::string trace;
  std::string ratios;
  std::string out = "out/report";
  std::string heuristic = "DTR";
  std::string runtime = "RuntimeV2EagerOptimized";
  double overhead_limit = 0;
  std::string timeline_ratio;
  double cliff_factor = 1.25;
  int jobs = 0;
  bool no_atlas = false;
  size_t atlas_max_runs = 2000;
  bool no_proofs = false;
  bool no_divergence = false;
  // The verdicts' options (reports/report_model.h VerdictOptions): no Z3
  // unless --z3, then explain's defaults.
  bool z3 = false;
  double timeout = 10;
  int32_t windows = 6;
  int32_t window_ops = 6;
  bool no_cut = false;
  std::string store;
};

int RunReport(const ReportFlags& f) {
  ReportOptions o;
  o.heuristic = &FindHeuristic(f.heuristic);
  o.runtime = ParseRuntime(f.runtime);
  if (f.overhead_limit != 0) {
    if (!(f.overhead_limit >= 1))
      throw Error(fmt::format("--overhead-limit must be at least 1, got {}", f.overhead_limit));
    o.overhead_limit = f.overhead_limit;
  }
  if (!(f.cliff_factor > 1))
    throw Error(fmt::format("--cliff-factor must be above 1, got {}", f.cliff_factor));
  o.cliff_factor = f.cliff_factor;
  o.jobs = f.jobs;
  o.atlas = !f.no_atlas;
  o.atlas_max_runs = f.atlas_max_runs;
  o.verdicts = !f.no_proofs;
  o.divergence = !f.no_divergence;
  o.verdict_options = {f.z3, f.timeout, f.windows, f.window_ops, !f.no_cut};
  Trace trace;
  if (f.trace.empty()) {
    o.trace_name = kDemoTraceName;
    o.trace_source = kDemoSource;
    o.command_trace = "demo.log";  // what `dtrcheck gen demo > demo.log` writes
    o.ratios_text = f.ratios.empty() ? DemoRatios() : f.ratios;
    trace = ParseTraceString(GenerateDemo(), "demo");
  } else {
    o.trace_name = std::filesystem::path(f.trace).filename().string();
    o.trace_source = f.trace;
    o.ratios_text = f.ratios.empty() ? kDefaultTraceRatios : f.ratios;
    trace = LoadTrace(f.trace);
  }
  std::unique_ptr<CertificateStore> store;
  std::string store_dir = f.store;
  if (store_dir.empty())
    if (const char* env = std::getenv("DTRCHECK_STORE")) store_dir = env;
  if (!store_dir.empty()) {
    if (f.trace.empty()) throw Error("--store needs a trace file (the demo trace has none)");
    store = std::make_unique<CertificateStore>(store_dir, f.trace, trace,
                                               ComputeBaseline(trace).memory);
    o.stored = store->Find(o.runtime);
    o.store_path = store_dir;
  }
  o.ratios = ParseRatios(o.ratios_text);
  if (!f.timeline_ratio.empty()) o.timeline_ratio = ParseRatio(f.timeline_ratio);
  ReportModel model;
  {
    // One bar per stage; the atlas counts bytes of the range, the others runs.
    std::unique_ptr<ProgressBar> bar;
    std::string stage;
    o.stage = [&](const std::string& s) {
      bar.reset();
      bar = std::make_unique<ProgressBar>("report: " + s);
      stage = s;
    };
    o.progress = [&](size_t d, size_t t) {
      if (!bar) return;
      if (stage == "atlas")
        bar->UpdatePercent(d, t, "of the budget range");
      else
        bar->Update(d, t);
    };
    model = BuildReport(trace, o);
  }
  std::vector<std::string> paths = WriteReportFiles(model, f.out);
  fmt::print("{}: {} with {} on {}, {} budgets\n", model.trace.name, model.ratios_text,
             model.heuristic, model.runtime, model.rows.size());
  for (const std::string& finding : CurveFindings(model)) fmt::print("  {}\n", finding);
  for (const std::string& finding : AtlasFindings(model)) fmt::print("  Atlas: {}\n", finding);
  if (model.atlas)
    for (const FeasibilityHole& h : model.atlas->atlas.summary.holes)
      fmt::print("    hole [{}, {}]: {} bytes\n", h.lo, h.hi, h.width());
  if (model.verdicts) {
    std::map<std::string, int> counts;
    for (const BudgetVerdict& v : *model.verdicts) ++counts[v.verdict];
    std::string list;
    for (const auto& [verdict, n] : counts) list += fmt::format(", {} {}", n, verdict);
    fmt::print("  Verdicts: {} OOM budgets{}\n", model.verdicts->size(), list);
    // Neighbouring rows with the same verdict on one line.
    const std::vector<BudgetVerdict>& vs = *model.verdicts;
    for (size_t i = 0; i < vs.size();) {
      size_t j = i;
      while (j + 1 < vs.size() && vs[j + 1].run == vs[j].run + 1 &&
             vs[j + 1].verdict == vs[i].verdict)
        ++j;
      std::string ratios = RatioLabel(model.rows[vs[i].run]);
      if (j > i) ratios += " to " + RatioLabel(model.rows[vs[j].run]);
      fmt::print("    {}: {} ({} budget{})\n", ratios, vs[i].verdict, j - i + 1, j > i ? "s" : "");
      i = j + 1;
    }
  } else {
    fmt::print("  Verdicts: {}\n", NotComputed(model.verdicts_skipped));
  }
  if (model.divergence) {
    fmt::print("  Divergence: {} pairs of neighbouring budgets in different regimes\n",
               model.divergence->size());
    for (const RegimeDivergence& d : *model.divergence)
      fmt::print("    {} / {} ({}): first divergent decision {}\n", RatioLabel(model.rows[d.run_a]),
                 RatioLabel(model.rows[d.run_b]), d.edge, d.first_divergent_decision);
  } else {
    fmt::print("  Divergence: {}\n", NotComputed(model.divergence_skipped));
  }
  for (const std::string& p : paths) fmt::print("wrote {}\n", p);
  return 0;
}

}  // namespace

void RegisterReportCommands(CLI::App& app, Actions& actions) {
  auto f = std::make_shared<ReportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "replay a ratio grid and write report.json, report.md and a self-contained report.html");
  cmd->alias("demo");  // `dtrcheck demo [TRACE] --out DIR`: the same command, named for the demo
  cmd->add_option("trace", f->trace,
                  "DTR execution log (default: the embedded demo trace, `dtrcheck gen demo`)");
  cmd->add_option(
      "--ratios", f->ratios,
      fmt::format("A:B:STEP (decimal grid) or r1,r2,... (default: {} for a trace, {} for the demo)",
                  kDefaultTraceRatios, DemoRatios()));
  cmd->add_option("-o,--out", f->out, "output directory (created if needed)")
      ->capture_default_str();
  cmd->add_option("--heuristic", f->heuristic, "eviction heuristic, simrd's name")
      ->capture_default_str();
  cmd->add_option("--runtime", f->runtime, "simrd runtime")->capture_default_str();
  cmd->add_option("--overhead-limit", f->overhead_limit,
                  "end a run as 'thrash' once remat compute exceeds baseline compute * (X - 1)");
  cmd->add_option("--timeline-ratio", f->timeline_ratio,
                  "the run whose memory timeline is drawn (default: first inversion, else first "
                  "OOM, else lowest)");
  cmd->add_option("--cliff-factor", f->cliff_factor,
                  "overhead jump between neighbouring budgets called a cliff")
      ->capture_default_str();
  cmd->add_option("-j,--jobs", f->jobs, "worker threads (default: one per core)");
  cmd->add_flag("--no-atlas", f->no_atlas,
                "do not walk the exact budget atlas over the grid's range (as `dtrcheck atlas`)");
  cmd->add_option("--atlas-max-runs", f->atlas_max_runs,
                  "stop the atlas (and say so) after this many replays")
      ->capture_default_str();
  cmd->add_flag("--no-proofs", f->no_proofs,
                "no verdicts: skip `explain`'s classification of each OOM budget");
  cmd->add_flag("--no-divergence", f->no_divergence,
                "skip `diff` between neighbouring budgets in different regimes");
  CLI::Option* z3 = cmd->add_flag(
      "--z3", f->z3,
      "verdicts: also ask Z3 (witness plans and inherent-proof windows, explain's defaults); "
      "slower, and its answers depend on the solver's time limit");
  cmd->add_option("--timeout", f->timeout, "with --z3: seconds per Z3 call (default 10)")
      ->needs(z3);
  cmd->add_option("--windows", f->windows,
                  "with --z3: Z3 windows tried for an inherent proof (default 6)")
      ->needs(z3);
  cmd->add_option("--window-ops", f->window_ops, "with --z3: operators per Z3 window (default 6)")
      ->needs(z3);
  cmd->add_flag("--no-cut", f->no_cut,
                "verdicts: do not try the keep-or-recompute cut for an inherent proof");
  cmd->add_option("--store", f->store,
                  "verdicts: certificate store directory (docs/certificate_store.md; default "
                  "$DTRCHECK_STORE): stored schedules and bounds, checked again at each budget");
  cmd->callback([f, &actions] { actions.push_back([f] { return RunReport(*f); }); });
}

}  // namespace dtr::cli
