#include "cli/instability_commands.h"

#include <fmt/core.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "checker/atlas_checkpoint.h"
#include "checker/grid_checkpoint.h"
#include "checker/ratio_grid.h"
#include "cli/flag_ranges.h"
#include "cli/progress.h"
#include "cli/replay_flags.h"
#include "diagnose/ablation.h"
#include "diagnose/counterfactual.h"
#include "diagnose/divergence.h"
#include "diagnose/instability_scan.h"
#include "model/error.h"
#include "model/trace_parser.h"
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
  RunSpec s = SpecFrom(f);
  s.ratio = ratio;
  return s;
}

ScanOptions Options(const ReplayFlags& f, double cliff_factor) {
  RunSpec spec = SpecFrom(f);
  ScanOptions o;
  o.heuristic = spec.heuristic;
  o.runtime = spec.runtime;
  o.overhead_limit = spec.overhead_limit;
  o.seed = spec.seed;
  o.jobs = f.jobs;
  o.cliff_factor = cliff_factor;
  return o;
}

}  // namespace

void AddScanFlags(CLI::App* cmd, ScanFlags& f) {
  AddCommon(cmd, f);
  cmd->add_option("--ratios", f.ratios, "A:B:STEP (decimal grid) or r1,r2,...")
      ->required()
      ->type_name("GRID")
      ->check(RatioGridText());
  AddCliffFactorFlag(cmd, f.cliff_factor,
                     "adjacent budgets whose overheads differ by more than this factor form a "
                     "cliff (default 1.5)");
  cmd->add_flag("--refine", f.refine, "locate every cliff and inversion edge to the byte");
  cmd->add_flag("--exact", f.exact,
                "walk every budget of the range (the exact atlas): boundaries to the byte without "
                "bisection, and inversions the grid missed");
  cmd->add_option("--max-walk", f.max_walk,
                  "replays per walk direction and boundary before bisecting (default 1000; 0: "
                  "bisect at once)")
      ->check(IntegerIn(0, 1000000));
  cmd->add_flag("--csv", f.csv, "one CSV row per grid point (the --json points)");
  AddCheckpointFlag(cmd, f.checkpoint,
                    "append each finished grid replay (--exact: atlas interval) to FILE; rerun with "
                    "the same FILE to replay only what it lacks (docs/checkpoint.md)");
}

int RunScan(const ScanFlags& f) {
  if (f.json && f.csv) throw Error("scan takes --json or --csv, not both");
  ScanOptions options = Options(f, f.cliff_factor);
  if (f.refine && f.exact) throw Error("scan takes --refine or --exact, not both");
  options.refine = f.refine;
  options.exact = f.exact;
  options.max_walk = f.max_walk;
  std::vector<Ratio> ratios = ParseRatios(f.ratios);
  Trace trace = LoadTrace(f.trace);
  Baseline baseline = ComputeBaseline(trace);
  TraceSummary summary = Summarize(f.trace, baseline);
  // The grid's replays, or the exact scan's atlas walk, go to the checkpoint.
  std::optional<GridCheckpoint> grid_checkpoint;
  std::optional<AtlasCheckpoint> atlas_checkpoint;
  GridJournal grid_journal;
  AtlasJournal atlas_journal;
  if (!f.checkpoint.empty()) {
    RunSpec spec = SpecFrom(f);
    nlohmann::ordered_json header =
        GridHeader("scan", GridKeyOf(CheckpointFingerprint(f.trace, trace, baseline), spec,
                                     {std::string(spec.heuristic->name)}, f.ratios));
    header["exact"] = f.exact;
    if (f.exact) {
      auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end(),
                                          [](const Ratio& a, const Ratio& b) { return a.value < b.value; });
      int64_t lo_bytes = BudgetForRatio(baseline.memory, lo->value);
      int64_t hi_bytes = BudgetForRatio(baseline.memory, hi->value);
      header["budget_lo"] = lo_bytes;
      header["budget_hi"] = hi_bytes;
      atlas_checkpoint.emplace(f.checkpoint, header, baseline, lo_bytes, hi_bytes);
      atlas_journal = atlas_checkpoint->Journal();
      options.atlas_journal = &atlas_journal;
    } else {
      grid_checkpoint.emplace(f.checkpoint, header);
      grid_journal = grid_checkpoint->Journal();
      options.grid_journal = &grid_journal;
    }
  }
  ScanResult scan;
  {
    ProgressBar bar("scan");
    scan = ScanInstability(trace, baseline, ratios, options, [&](size_t d, size_t t) {
      if (options.exact)
        bar.UpdatePercent(d, t, "of the range");  // bytes: a count would mean nothing
      else
        bar.Update(d, t);
    });
  }
  if (f.json)
    std::cout << ScanJson(summary, scan).dump() << "\n";
  else if (f.csv)
    PrintCsvTable(std::cout, ScanJson(summary, scan)["points"]);
  else
    PrintScanText(std::cout, summary, scan);
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
    a = SpecFrom(f);
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
  Trace trace = LoadTrace(f.trace);
  Baseline baseline = ComputeBaseline(trace);
  TraceSummary summary = Summarize(f.trace, baseline);
  RunComparison cmp;
  {
    ProgressBar bar("diff", std::chrono::seconds(1));
    ReplayProgress progress(bar, trace.program.size(),
                            a.overhead_limit ? "" : ReplayProgress::kLimitHint, 2);
    cmp = CompareRuns(trace, baseline, a, b, {&progress.watcher(0), &progress.watcher(1)});
  }
  if (f.json)
    std::cout << DiffJson(summary, trace, cmp).dump() << "\n";
  else
    PrintDiffText(std::cout, summary, trace, cmp);
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
  Trace trace = LoadTrace(f.trace);
  Baseline baseline = ComputeBaseline(trace);
  TraceSummary summary = Summarize(f.trace, baseline);
  BlameResult blame;
  {
    ProgressBar bar("blame");
    blame = Blame(trace, baseline, run, against, options,
                  [&](size_t d, size_t t) { bar.Update(d, t); });
  }
  if (f.json)
    std::cout << BlameJson(summary, trace, blame).dump() << "\n";
  else
    PrintBlameText(std::cout, summary, trace, blame);
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
  ScanOptions options = Options(f, f.cliff_factor);
  std::vector<Ratio> ratios = ParseRatios(f.ratios);
  Trace trace = LoadTrace(f.trace);
  Baseline baseline = ComputeBaseline(trace);
  TraceSummary summary = Summarize(f.trace, baseline);
  AblationResult result;
  {
    ProgressBar bar("ablate");
    result =
        Ablate(trace, baseline, ratios, options, [&](size_t d, size_t t) { bar.Update(d, t); });
  }
  if (f.json)
    std::cout << AblateJson(summary, result).dump() << "\n";
  else
    PrintAblateText(std::cout, summary, result);
  return 0;
}

}  // namespace dtr::cli
