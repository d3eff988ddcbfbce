#include "cli/instability_commands.h"

#include <fmt/core.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "checker/ratio_grid.h"
#include "api/front_door.h"
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

namespace dtr::cli {

namespace {

// trace, --heuristic, --runtime, --overhead-limit, --seed, -j, --json.
void AddCommon(CLI::App* cmd, ReplayFlags& f) {
  AddTraceArgument(cmd, f.trace);
  AddReplayFlags(cmd, f);
  AddJobsFlag(cmd, f);
  AddJsonFlag(cmd, f, "one JSON object (docs/instability_json.md)");
}

RunSpec SpecAt(const ReplayFlags& f, const Ratio& ratio) {
  RunSpec s = RunSpecOf(f.Resolve());
  s.ratio = ratio;
  return s;
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
                     "adjacent budgets whose overheads differ by more than this factor form a "
                     "cliff (default 1.5)");
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
    scan = api::Scan(trace, f.request, [&](size_t d, size_t t) {
      if (f.request.exact)
        bar.UpdatePercent(d, t, "of the range");  // bytes: a count would mean nothing
      else
        bar.Update(d, t);
    });
  }
  if (f.json)
    std::cout << ScanJson(trace.summary, scan).dump() << "\n";
  else if (f.csv)
    PrintCsvTable(std::cout, ScanJson(trace.summary, scan)["points"]);
  else
    PrintScanText(std::cout, trace.summary, scan);
  return 0;
}

void AddDiffFlags(CLI::App* cmd, DiffFlags& f) {
  AddCommon(cmd, f);
  CLI::Option* ratios =
      cmd->add_option("--ratios", f.ratios, "the two ratios (run a, run b)")
          ->type_name("A,B")
          ->check(RatioGridText());
  cmd->add_option("--budgets", f.budgets, "the two budgets in bytes, instead of --ratios")
      ->type_name("A,B")
      ->excludes(ratios);
}

int RunDiff(const DiffFlags& f) {
  RunSpec a, b;
  if (!f.budgets.empty()) {
    std::vector<int64_t> budgets;
    std::string_view rest = f.budgets;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string item(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      int64_t v = -1;
      size_t used = 0;
      try {
        v = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || item.empty() || v < 0)
        throw Error(fmt::format("--budgets: expected two byte counts A,B, got '{}'", f.budgets));
      budgets.push_back(v);
    }
    if (budgets.size() != 2)
      throw Error(fmt::format("diff needs exactly two budgets, got {}", budgets.size()));
    a = RunSpecOf(f.Resolve());
    b = a;
    a.budget = budgets[0];
    b.budget = budgets[1];
  } else {
    if (f.ratios.empty()) throw Error("diff needs --ratios A,B or --budgets A,B");
    std::vector<Ratio> ratios = ParseRatios(f.ratios);
    if (ratios.size() != 2)
      throw Error(fmt::format("diff needs exactly two ratios, got {}", ratios.size()));
    a = SpecAt(f, ratios[0]);
    b = SpecAt(f, ratios[1]);
  }
  api::LoadedTrace loaded = api::LoadTraceFile(f.trace);
  const Trace& trace = loaded.trace;
  RunComparison cmp;
  {
    ProgressBar bar("diff", std::chrono::seconds(1));
    ReplayProgress progress(bar, trace.program.size(),
                            a.overhead_limit ? "" : ReplayProgress::kLimitHint, 2);
    cmp = CompareRuns(trace, loaded.baseline, a, b, {&progress.watcher(0), &progress.watcher(1)});
  }
  if (f.json)
    std::cout << DiffJson(loaded.summary, trace, cmp).dump() << "\n";
  else
    PrintDiffText(std::cout, loaded.summary, trace, cmp);
  return 0;
}

void AddBlameFlags(CLI::App* cmd, BlameFlags& f) {
  AddCommon(cmd, f);
  cmd->add_option("--ratio", f.ratio, "the run to blame")->required()->type_name("RATIO")->check(RatioText());
  cmd->add_option("--against", f.against,
                  "a reference ratio: search from the divergence with it; for a passing run, "
                  "reach its regime")
      ->type_name("RATIO")
      ->check(RatioText());
  cmd->add_option("--max-replays", f.options.max_replays,
                  "candidate replays to spend (default 200)")
      ->check(IntegerIn(1, 1000000));
  cmd->add_option("--max-fixes", f.options.max_fixes, "stop after this many fixes (default 3)")
      ->check(IntegerIn(1, 1000));
  cmd->add_option(
         "--candidates", f.options.candidates_per_decision,
         "storages tried per decision: the runner-up, then the loop's next choices (default 3)")
      ->check(IntegerIn(1, 1000));
  cmd->add_option("--regime-factor", f.options.regime_factor,
                  "a passing run must get within this factor of --against (or this much faster) "
                  "(default 1.5)")
      ->check(NumberAbove(1));
}

int RunBlame(const BlameFlags& f) {
  RunSpec run = SpecAt(f, ParseRatio(f.ratio));
  std::optional<RunSpec> against;
  if (!f.against.empty()) against = SpecAt(f, ParseRatio(f.against));
  BlameOptions options = f.options;
  options.jobs = f.jobs;
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  BlameResult blame;
  {
    ProgressBar bar("blame");
    blame = Blame(t.trace, t.baseline, run, against, options,
                  [&](size_t d, size_t total) { bar.Update(d, total); });
  }
  if (f.json)
    std::cout << BlameJson(t.summary, t.trace, blame).dump() << "\n";
  else
    PrintBlameText(std::cout, t.summary, t.trace, blame);
  return 0;
}

void AddAblateFlags(CLI::App* cmd, AblateFlags& f) {
  AddCommon(cmd, f);
  cmd->add_option("--ratios", f.ratios, "A:B:STEP (decimal grid) or r1,r2,...")
      ->required()
      ->type_name("GRID")
      ->check(RatioGridText());
  AddCliffFactorFlag(cmd, f.cliff_factor, "as for scan (default 1.5)");
}

int RunAblate(const AblateFlags& f) {
  ScanOptions options;
  static_cast<ReplaySettings&>(options) = f.Resolve();
  options.jobs = f.jobs;
  options.cliff_factor = f.cliff_factor;
  std::vector<Ratio> ratios = ParseRatios(f.ratios);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  AblationResult result;
  {
    ProgressBar bar("ablate");
    result = Ablate(t.trace, t.baseline, ratios, options, [&](size_t d, size_t total) { bar.Update(d, total); });
  }
  if (f.json)
    std::cout << AblateJson(t.summary, result).dump() << "\n";
  else
    PrintAblateText(std::cout, t.summary, result);
  return 0;
}

}  // namespace dtr::cli
