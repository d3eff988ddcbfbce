#include "cli/atlas_commands.h"

#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "checker/atlas_checkpoint.h"
#include "checker/budget_atlas.h"
#include "checker/ratio_grid.h"
#include "cli/progress.h"
#include "cli/replay_flags.h"
#include "model/echo.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "reports/atlas_report.h"

namespace dtr::cli {

namespace {

// "A:B" -> the two halves; throws naming the flag otherwise.
std::pair<std::string, std::string> SplitRange(const std::string& text, const char* flag) {
  size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw Error(fmt::format("{} expects LO:HI, got '{}'", flag, Echo(text)));
  return {text.substr(0, colon), text.substr(colon + 1)};
}

int64_t ParseBytes(const std::string& text) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0 || v < 0)
    throw Error(fmt::format("--budgets expects byte counts like 1006117915:1086607348, got '{}'",
                            Echo(text)));
  return v;
}

}  // namespace

void AddAtlasFlags(CLI::App* cmd, AtlasFlags& f) {
  AddTraceArgument(cmd, f.trace);
  CLI::Option* ratios = cmd->add_option("--ratios", f.ratios,
                                        "range of budget ratios, both ends included (budget int(baseline*r))")
                            ->type_name("A:B");
  cmd->add_option("--budgets", f.budgets, "range in bytes, both ends included (instead of --ratios)")
      ->type_name("LO:HI")
      ->excludes(ratios);
  AddReplayFlags(cmd, f);
  AddJobsFlag(cmd, f);
  AddJsonFlag(cmd, f, "one JSON object: summary, intervals, bands (docs/atlas_json.md)");
  cmd->add_flag("--csv", f.csv, "one CSV row per interval");
  cmd->add_flag("--all", f.all, "text: list every interval however many there are");
  AddCheckpointFlag(cmd, f.checkpoint,
                    "append each finished interval to FILE; rerun with the same FILE to resume an "
                    "interrupted walk (docs/checkpoint.md)");
}

int RunAtlas(const AtlasFlags& f) {
  if (f.json && f.csv) throw Error("atlas takes --json or --csv, not both");
  if (f.ratios.empty() == f.budgets.empty())
    throw Error("atlas needs --ratios A:B or --budgets LO:HI");
  RunSpec spec = SpecFrom(f);
  std::optional<std::pair<Ratio, Ratio>> ratios;
  std::pair<int64_t, int64_t> bytes;
  if (!f.ratios.empty()) {
    auto [a, b] = SplitRange(f.ratios, "--ratios");
    ratios = {ParseRatio(a), ParseRatio(b)};
    if (ratios->second.value < ratios->first.value)
      throw Error(fmt::format("--ratios {}: the range is empty", Echo(f.ratios)));
  } else {
    auto [a, b] = SplitRange(f.budgets, "--budgets");
    bytes = {ParseBytes(a), ParseBytes(b)};
  }
  Trace trace = LoadTrace(f.trace);
  Baseline baseline = ComputeBaseline(trace);
  if (ratios)
    bytes = {BudgetForRatio(baseline.memory, ratios->first.value),
             BudgetForRatio(baseline.memory, ratios->second.value)};
  TraceSummary summary = Summarize(f.trace, baseline);
  if (bytes.second < bytes.first || bytes.first < 0)  // before a checkpoint file is made
    throw Error(fmt::format("an atlas needs 0 <= lo <= hi, got budgets [{}, {}]", bytes.first,
                            bytes.second));
  std::optional<AtlasCheckpoint> checkpoint;
  AtlasJournal journal;
  if (!f.checkpoint.empty()) {
    checkpoint.emplace(f.checkpoint,
                       WalkKeyOf(CheckpointFingerprint(f.trace, trace, baseline), spec, bytes.first, bytes.second),
                       baseline);
    journal = checkpoint->Journal();
  }
  BudgetAtlas atlas;
  {
    ProgressBar bar("atlas");
    atlas = BuildAtlas(
        trace, baseline, spec, bytes.first, bytes.second, f.jobs,
        [&](int64_t covered, int64_t total, size_t runs) {
          bar.UpdatePercent(covered, total, fmt::format("of the range, {} replays", runs));
        },
        /*max_runs=*/0, checkpoint ? &journal : nullptr);
  }
  if (f.json)
    std::cout << AtlasJson(summary, spec, atlas).dump() << "\n";
  else if (f.csv)
    PrintAtlasCsv(std::cout, summary, atlas);
  else
    PrintAtlasText(std::cout, summary, spec, atlas, f.all ? SIZE_MAX : 60);
  return 0;
}

}  // namespace dtr::cli
