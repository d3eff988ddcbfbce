#include "cli/atlas_commands.h"

#include <fmt/core.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/progress.h"
#include "cli/replay_flags.h"
#include "model/error.h"
#include "reports/atlas_report.h"
#include "reports/number_format.h"

namespace dtr::cli {

void AddAtlasFlags(CLI::App* cmd, AtlasFlags& f) {
  AddTraceArgument(cmd, f.trace);
  api::AtlasRequest& r = f.request;
  CLI::Option* ratios =
      cmd->add_option("--ratios", r.ratios,
                      "range of budget ratios, both ends included (budget int(baseline*r)); a grid "
                      "A:B:STEP or r1,r2,... as sweep takes it walks its lowest to highest ratio")
          ->type_name("A:B");
  cmd->add_option("--budgets", r.budgets, "range in bytes, both ends included (instead of --ratios)")
      ->type_name("LO:HI")
      ->excludes(ratios);
  AddReplayFlags(cmd, r.settings);
  AddJobsFlag(cmd, r.jobs);
  cmd->add_option(
         "--max-evals", r.max_evals,
         fmt::format(
             "stop after the interval where the replays' heuristic evaluations, counted up "
             "from the range start, reach N (default {}, at most about 30 s here; 0: no cap)",
             GroupedInt(kDefaultAtlasEvals)))
      ->check(InRange(api::kMaxEvals));
  cmd->add_option("--max-runs", r.max_runs,
                  "stop after N replays, counted up from the range start (default 0: no cap)")
      ->check(InRange(api::kMaxRuns));
  AddJsonFlag(cmd, f.json, "one JSON object: summary, intervals, bands (docs/atlas_json.md)");
  cmd->add_flag("--csv", f.csv, "one CSV row per interval");
  cmd->add_flag("--all", f.all, "text: list every interval however many there are");
  AddCheckpointFlag(cmd, r.checkpoint,
                    "append each finished interval to FILE; rerun with the same FILE to resume an "
                    "interrupted walk (docs/checkpoint.md)");
}

int RunAtlas(const AtlasFlags& f) {
  if (f.json && f.csv) throw Error("atlas takes --json or --csv, not both");
  api::Validate(f.request);
  api::LoadedTrace trace = api::LoadTraceFile(f.trace);
  api::AtlasAnswer answer;
  const AtlasCap cap{.runs = f.request.max_runs, .evals = f.request.max_evals};
  {
    ProgressBar bar("atlas");
    answer = api::Atlas(
        trace, f.request, [&](int64_t covered, int64_t total, size_t runs, int64_t evals) {
          // The larger part: of the range walked, or of a cap spent.
          const double part = std::max(static_cast<double>(covered) / static_cast<double>(total),
                                       cap.Spent(runs, evals));
          bar.UpdatePercent(
              static_cast<size_t>(std::min(1.0, part) * 1000), 1000,
              fmt::format(
                  "of the range or of the cap, {} replays, {} heuristic evaluations (cap: {})",
                  runs, GroupedInt(evals), AtlasCapText(cap)));
        });
  }
  if (f.json)
    std::cout << AtlasJson(trace.summary, answer.spec, answer.atlas).dump() << "\n";
  else if (f.csv)
    PrintAtlasCsv(std::cout, trace.summary, answer.atlas);
  else
    PrintAtlasText(std::cout, trace.summary, answer.spec, answer.atlas, f.all ? SIZE_MAX : 60);
  return 0;
}

}  // namespace dtr::cli
