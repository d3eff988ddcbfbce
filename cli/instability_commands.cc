#include "cli/instability_commands.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "api/front_door.h"
#include "checker/drivers/ratio_grid.h"
#include "cli/flag_ranges.h"
#include "cli/progress.h"
#include "cli/replay_flags.h"
#include "diagnose/ablation.h"
#include "diagnose/counterfactual.h"
#include "diagnose/divergence.h"
#include "diagnose/instability_scan.h"
#include "model/error.h"
#include "reports/csv_table.h"
#include "reports/instability_report.h"
#include "reports/number_format.h"

namespace dtr::cli {

namespace {

// trace, --heuristic, --runtime, --overhead-limit, --seed, -j (unless
// `jobs` is null), --json.
void AddCommon(CLI::App* cmd, std::string& trace, api::ReplayChoice& settings, int* jobs,
               bool& json) {
  AddTraceArgument(cmd, trace);
  AddReplayFlags(cmd, settings);
  if (jobs) AddJobsFlag(cmd, *jobs);
  AddJsonFlag(cmd, json, "one JSON object (docs/instability_json.md)");
}

}  // namespace

void AddScanFlags(CLI::App* cmd, ScanFlags& f) {
  api::ScanRequest& r = f.request;
  AddTraceArgument(cmd, f.trace);
  AddReplayFlags(cmd, r.settings);
  AddJobsFlag(cmd, r.jobs);
  AddJsonFlag(cmd, f.json, "one JSON object (docs/instability_json.md)");
  cmd->add_option("--ratios", r.ratios, "A:B:STEP (decimal grid) or r1,r2,...")
      ->required()
      ->type_name("GRID")
      ->check(RatioGridText());
  AddCliffFactorFlag(cmd, r.cliff_factor,
                     fmt::format("adjacent budgets whose overheads differ by more than this factor "
                                 "form a cliff (default {})",
                                 kDefaultCliffFactor));
  cmd->add_flag("--refine", r.refine, "locate every cliff and inversion edge to the byte");
  cmd->add_flag("--exact", r.exact,
                "walk every budget of the range (the exact atlas): boundaries to the byte without "
                "bisection, and inversions the grid missed");
  cmd->add_option("--max-walk", r.max_walk,
                  "replays per walk direction and boundary before bisecting (default 1000; 0: "
                  "bisect at once)")
      ->check(InRange(api::kMaxWalk));
  cmd->add_flag("--csv", f.csv, "one CSV row per grid point (the --json points)");
  AddCheckpointFlag(cmd, r.checkpoint,
                    "append each finished grid replay (--exact: atlas interval) to FILE; rerun with "
                    "the same FILE to replay only what it lacks (docs/checkpoint.md)");
}

int RunScan(const ScanFlags& f) {
  if (f.json && f.csv) throw Error("scan takes --json or --csv, not both");
  api::Validate(f.request);
  api::LoadedTrace trace = api::LoadTraceFile(f.trace);
  ScanResult scan;
  {
    ProgressBar bar("scan");
    GridProgress grid(trace.trace.program.size(),
                      f.request.settings.overhead_limit ? "" : ReplayProgress::kLimitHint);
    grid.SetBar(&bar);
    scan = api::Scan(
        trace, f.request,
        [&](size_t d, size_t t) {
          if (f.request.exact)
            bar.UpdatePercent(d, t, "of the range");  // bytes: a count would mean nothing
          else
            grid.Done(d, t);
        },
        &grid);
  }
  if (f.json)
    std::cout << ScanJson(trace.summary, scan).dump() << "\n";
  else if (f.csv) {
    nlohmann::ordered_json points = ScanJson(trace.summary, scan)["points"];
    // As sweep --csv: an OOM run's overhead is no result, an empty cell.
    for (auto& p : points)
      if (p["result"] == "oom") p["overhead"] = nullptr;
    PrintCsvTable(std::cout, points);
  } else
    PrintScanText(std::cout, trace.summary, scan);
  return 0;
}

void AddDiffFlags(CLI::App* cmd, DiffFlags& f) {
  api::DiffRequest& r = f.request;
  // No -j: the two replays always run side by side.
  AddCommon(cmd, f.trace, r.settings, nullptr, f.json);
  CLI::Option* ratios = cmd->add_option("--ratios", r.ratios, "the two ratios (run a, run b)")
                            ->type_name("A,B")
                            ->check(RatioGridText());
  cmd->add_option("--budgets", r.budgets, "the two budgets in bytes, instead of --ratios")
      ->type_name("A,B")
      ->excludes(ratios);
}

int RunDiff(const DiffFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  RunComparison cmp;
  {
    ProgressBar bar("diff", std::chrono::seconds(1));
    ReplayProgress progress(bar, t.trace.program.size(),
                            f.request.settings.overhead_limit ? "" : ReplayProgress::kLimitHint, 2);
    cmp = api::Diff(t, f.request, {&progress.watcher(0), &progress.watcher(1)});
  }
  if (f.json)
    std::cout << DiffJson(t.summary, t.trace, cmp).dump() << "\n";
  else
    PrintDiffText(std::cout, t.summary, t.trace, cmp);
  return 0;
}

void AddBlameFlags(CLI::App* cmd, BlameFlags& f) {
  api::BlameRequest& r = f.request;
  AddCommon(cmd, f.trace, r.settings, &r.options.jobs, f.json);
  cmd->add_option("--ratio", r.ratio, "the run to blame")
      ->required()
      ->type_name("RATIO")
      ->check(RatioText());
  cmd->add_option("--against", r.against,
                  "a reference ratio: search from the divergence with it; for a passing run, "
                  "reach its regime")
      ->type_name("RATIO")
      ->check(RatioText());
  cmd->add_option("--max-replays", r.options.max_replays,
                  "candidate replays to spend (default 200)")
      ->check(IntegerIn(1, 1000000));
  cmd->add_option("--max-evals", r.options.max_evals,
                  fmt::format("stop after the batch in which the candidate replays' heuristic "
                              "evaluations plus computations reach N (default {}; 0: no cap)",
                              GroupedInt(kDefaultBlameEvals)))
      ->check(InRange(api::kMaxEvals));
  cmd->add_option("--max-fixes", r.options.max_fixes, "stop after this many fixes (default 3)")
      ->check(IntegerIn(1, 1000));
  cmd->add_option(
         "--candidates", r.options.candidates_per_decision,
         "storages tried per decision: the runner-up, then the loop's next choices (default 3)")
      ->check(IntegerIn(1, 1000));
  cmd->add_option("--regime-factor", r.options.regime_factor,
                  "a passing run must get within this factor of --against (or this much faster) "
                  "(default 1.5)")
      ->check(NumberAbove(1));
}

int RunBlame(const BlameFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  BlameResult blame;
  {
    ProgressBar bar("blame");
    blame = api::Blame(t, f.request, [&](size_t d, size_t total) {
      bar.UpdatePercent(d, total, "of the replay or evaluation cap");
    });
  }
  if (f.json)
    std::cout << BlameJson(t.summary, t.trace, blame).dump() << "\n";
  else
    PrintBlameText(std::cout, t.summary, t.trace, blame);
  return 0;
}

void AddAblateFlags(CLI::App* cmd, AblateFlags& f) {
  api::AblateRequest& r = f.request;
  AddCommon(cmd, f.trace, r.settings, &r.jobs, f.json);
  cmd->add_option("--ratios", r.ratios, "A:B:STEP (decimal grid) or r1,r2,...")
      ->required()
      ->type_name("GRID")
      ->check(RatioGridText());
  AddCliffFactorFlag(cmd, r.cliff_factor,
                     fmt::format("as for scan (default {})", kDefaultCliffFactor));
  cmd->add_option("--max-evals", r.max_evals,
                  fmt::format("the runs' heuristic evaluations plus computations in all, shared "
                              "evenly: a run stops at its share, as 'stopped' (unknown) (default "
                              "{}; 0: no cap)",
                              GroupedInt(kDefaultAblateEvals)))
      ->check(InRange(api::kMaxEvals));
}

int RunAblate(const AblateFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  AblationResult result;
  {
    const size_t runs = AblateRuns(ParseRatios(f.request.ratios).size());
    const int64_t share = AblateRunWorkLimit(f.request.max_evals, runs);
    // What it will do, before the first replay (the text form's first line).
    if (!f.json) {
      if (share > 0)
        fmt::print(std::cout,
                   "ablate: {} runs, each stopped after {} heuristic evaluations plus "
                   "computations, as 'stopped' (--max-evals {} shared evenly; 0: no cap)\n",
                   runs, GroupedInt(share), GroupedInt(f.request.max_evals));
      else
        fmt::print(std::cout, "ablate: {} runs, with no cap\n", runs);
      std::cout.flush();
    }
    ProgressBar bar("ablate");
    // Each run ends at its share of --max-evals unless that is 0.
    const bool endless = f.request.max_evals <= 0 && !f.request.settings.overhead_limit;
    GridProgress grid(t.trace.program.size(), endless ? ReplayProgress::kLimitHint : "",
                      /*name_heuristics=*/true);
    grid.SetBar(&bar);
    result = api::Ablate(
        t, f.request, [&](size_t d, size_t total) { grid.Done(d, total); }, &grid);
  }
  if (f.json)
    std::cout << AblateJson(t.summary, result).dump() << "\n";
  else
    PrintAblateText(std::cout, t.summary, result);
  return 0;
}

}  // namespace dtr::cli
