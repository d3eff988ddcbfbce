#include "cli/report_commands.h"

#include <fmt/core.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string_view>

#include "api/front_door.h"
#include "cli/flag_ranges.h"
#include "cli/progress.h"
#include "cli/replay_flags.h"
#include "diagnose/report_model.h"
#include "model/error.h"
#include "reports/number_format.h"
#include "reports/report_headline.h"
#include "reports/report_text.h"
#include "traces/demo.h"

namespace dtr::cli {

namespace {

// The console summary of one heuristic's part of the report.
void PrintSummary(const ReportModel& model) {
  fmt::print("{}: {} with {} on {}, {} budgets\n", model.trace.name, model.ratios_text,
             model.heuristic, model.runtime, model.rows.size());
  fmt::print("{}", HeadlineText(model.headline, "  "));
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
  api::Validate(f.request);
  api::LoadedTrace trace = f.trace.empty() ? api::LoadDemoTrace() : api::LoadTraceFile(f.trace);
  api::ReportAnswer answer;
  {
    // One bar per stage; the atlas counts replays of its budget, the grid
    // and refine stages runs and the steps of the runs under way, the others
    // runs.
    std::unique_ptr<ProgressBar> bar;
    std::string stage;
    GridProgress grid(trace.trace.program.size(),
                      f.request.settings.overhead_limit ? "" : ReplayProgress::kLimitHint);
    auto ends_with = [&](std::string_view tail) {
      return stage.size() >= tail.size() &&
             stage.compare(stage.size() - tail.size(), tail.size(), tail) == 0;
    };
    answer = api::Report(
        trace, f.request,
        [&](const std::string& s) {
          grid.SetBar(nullptr);
          bar.reset();
          bar = std::make_unique<ProgressBar>("report: " + s);
          stage = s;
          if (ends_with("grid") || ends_with("refine")) grid.SetBar(bar.get());
        },
        [&](size_t d, size_t t) {
          if (!bar) return;
          if (ends_with("atlas"))
            bar->UpdatePercent(d, t, "of the atlas's cap (--atlas-max-runs, --atlas-max-evals)");
          else if (ends_with("grid") || ends_with("refine"))
            grid.Done(d, t);
          else
            bar->Update(d, t);
        },
        [&](const std::string& plan) {
          // Up front, before the first replay: what the report will do.
          fmt::print("{}\n", plan);
          std::fflush(stdout);
        },
        &grid);
    grid.SetBar(nullptr);
  }
  for (const ReportModel& model : answer.report.heuristics) PrintSummary(model);
  for (const std::string& p : answer.files) fmt::print("wrote {}\n", p);
  return 0;
}

void AddReportFlags(CLI::App* cmd, ReportFlags& f) {
  api::ReportRequest& r = f.request;
  cmd->add_option("trace", f.trace,
                  "DTR execution log (default: the embedded demo trace, `dtrcheck gen demo`)")
      ->type_name("FILE");
  cmd->add_option(
         "--ratios", r.ratios,
         fmt::format(
             "A:B:STEP (decimal grid) or r1,r2,... (default for a trace: from its proven floor, "
             "rounded up to a hundredth, to 1.0 in steps sized to the trace; {} for the demo)",
             DemoRatios()))
      ->type_name("GRID")
      ->check(RatioGridText());
  cmd->add_option("-o,--out", r.out, "output directory (created if needed)")
      ->capture_default_str()
      ->type_name("DIR");
  cmd->add_option("--figures", r.figures,
                  "also write each figure as a standalone SVG file into DIR (curve.svg, "
                  "zoom-a.svg, timeline.svg, frontier-1.svg, ...)")
      ->type_name("DIR");
  AddHeuristicsFlag(cmd, r.settings.heuristics,
                    "eviction heuristic(s), simrd's names, comma-separated: one report part each, "
                    "overlaid on the budget curve");
  AddRuntimeFlag(cmd, r.settings);
  AddOverheadLimitFlag(cmd, r.settings);
  cmd->add_option("--timeline-ratio", r.timeline_ratio,
                  "draw the memory timeline of this run alone (default: the last pass and the "
                  "first OOM around the first inversion)")
      ->type_name("RATIO")
      ->check(RatioText());
  AddCliffFactorFlag(cmd, r.cliff_factor,
                     fmt::format("as for scan (default {})", kDefaultCliffFactor));
  AddJobsFlag(cmd, r.jobs);
  cmd->add_flag_callback("--no-atlas", [&r] { r.atlas = false; },
                "do not walk the exact budget atlas over the grid's range (as `dtrcheck atlas`)");
  AddValueOption(
      cmd, "--atlas-max-runs", r.atlas_max_runs,
      fmt::format("the atlas's cap of replays: it walks the grid's range, most telling windows "
                  "first, until it has made this many replays or --atlas-max-evals heuristic "
                  "evaluations, and says what it covered (default {}; counts, not a time, so "
                  "the report is the same on any machine)",
                  kDefaultReportAtlasCap.runs))
      ->check(InRange(api::kAtlasMaxRuns));
  AddValueOption(
      cmd, "--atlas-max-evals", r.atlas_max_evals,
      fmt::format("the atlas's cap of heuristic evaluations, the replays' cost (default {})",
                  GroupedInt(kDefaultReportAtlasCap.evals)))
      ->check(InRange(api::kAtlasMaxEvals));
  cmd->add_option("--max-verdicts", r.max_verdicts,
                  "classify at most this many OOM budgets, the highest of each failing stretch "
                  "first (default: sized to the trace)")
      ->check(InRange(api::kMaxVerdicts));
  cmd->add_flag_callback("--no-refine", [&r] { r.refine = false; },
                "keep exactly the grid: add no rows where the atlas found inversions and cliffs");
  cmd->add_flag_callback("--no-proofs", [&r] { r.proofs = false; },
                "no verdicts: skip `explain`'s classification of each OOM budget");
  cmd->add_flag_callback("--no-divergence", [&r] { r.divergence = false; },
                "skip `diff` between neighbouring budgets in different regimes");
  CLI::Option* z3 = cmd->add_flag(
      "--z3", r.z3,
      "verdicts: also ask Z3 (witness plans and inherent-proof windows, explain's defaults); "
      "slower, and its answers depend on the solver's limits (--timeout, --work-limit)");
  // Each of these four needs --z3; CLI11 says so in --help ("Needs: --z3").
  AddTimeoutFlag(cmd, r.timeout);
  AddWorkLimitFlag(cmd, r.work_limit);
  AddWindowsFlag(cmd, r.windows, "Z3 windows tried for an inherent proof (default 6)");
  AddWindowOpsFlag(cmd, r.window_ops);
  for (const char* name : {"--timeout", "--work-limit", "--windows", "--window-ops"})
    cmd->get_option(name)->needs(z3);
  cmd->add_flag_callback("--no-cut", [&r] { r.cut = false; },
                "verdicts: do not try the keep-or-recompute cut for an inherent proof");
  cmd->add_option_function<std::string>(
         "--store", [&r](const std::string& dir) { r.store = dir; },
                  "verdicts: certificate store directory (docs/certificate_store.md; default "
                  "$DTRCHECK_STORE; not used for the demo): stored schedules and bounds, checked "
                  "again at each budget")
      ->type_name("DIR");
}

}  // namespace dtr::cli
