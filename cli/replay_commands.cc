#include "cli/replay_commands.h"

#include <fmt/core.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "checker/engine/replay.h"
#include "checker/proofs/eviction_script.h"
#include "cli/exit_status.h"
#include "cli/flag_ranges.h"
#include "cli/progress.h"
#include "cli/replay_flags.h"
#include "diagnose/decision_log.h"
#include "model/error.h"
#include "reports/csv_table.h"
#include "reports/run_report.h"

namespace dtr::cli {

namespace {

constexpr const char* kRunJsonHelp =
    "one JSON object per run, with the field names of simrd's reference files";

void PrintRuns(const Trace& trace, const TraceSummary& summary, const std::vector<RunRecord>& runs,
               bool json, bool csv = false) {
  if (json) {
    for (const RunRecord& r : runs) std::cout << RunJson(summary, r, &trace).dump() << "\n";
  } else if (csv) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const RunRecord& r : runs) {
      rows.push_back(RunJson(summary, r, &trace));
      // An OOM run's overhead (simrd's, at the failure) is no result: an empty cell.
      if (r.result.outcome == Outcome::kOom) rows.back()["overhead"] = nullptr;
    }
    PrintCsvTable(std::cout, rows);
  } else if (runs.size() == 1) {
    PrintRunText(std::cout, summary, runs[0], &trace);
  } else {
    PrintSweepText(std::cout, summary, runs);
  }
}

}  // namespace

void AddInfoFlags(CLI::App* cmd, InfoFlags& f) {
  AddTraceArgument(cmd, f.trace);
  cmd->add_flag("--json", f.json,
                "one JSON object with these fields (baseline under simrd's reference names)");
}

int RunInfo(const InfoFlags& f) {
  api::LoadedTrace trace = api::LoadTraceFile(f.trace);
  if (f.json)
    std::cout << api::InfoJson(trace).dump() << "\n";
  else
    PrintTraceInfo(std::cout, trace.trace, trace.summary);
  return 0;
}

void AddReplayCommandFlags(CLI::App* cmd, ReplayCommandFlags& f) {
  AddTraceArgument(cmd, f.trace);
  AddBudgetFlags(cmd, f.request.budget);
  cmd->add_option(
         "--emit-script", f.emit_script,
         "write the run's heuristic evictions as an eviction script (docs/eviction_script.md)")
      ->type_name("FILE");
  cmd->add_option("--storages", f.storages,
                  "also list per-storage eviction counts, the N most evicted (0: all; JSON: all)")
      ->expected(0, 1)
      ->default_str("20")
      ->check(IntegerIn(0, kMaxInt32));
  cmd->add_option("--override", f.request.overrides,
                  "that decision evicts TENSOR's storage instead (repeatable; as blame's fixes)")
      ->take_all()
      ->type_name("DECISION=TENSOR");
  AddReplayFlags(cmd, f.request.settings);
  cmd->add_flag("--fail-on-oom", f.fail_on_oom,
                "exit status 1 unless the run passes (it ran out of memory or, with "
                "--overhead-limit, thrashed)");
  AddJsonFlag(cmd, f.json, kRunJsonHelp);
  cmd->add_option("--record", f.record,
                  "write every decision point and eager eviction to FILE (gzip'd JSON lines, "
                  "docs/decision_log.md)")
      ->type_name("FILE");
}

int RunReplay(const ReplayCommandFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace loaded = api::LoadTraceFile(f.trace);
  const Trace& trace = loaded.trace;
  const Baseline& baseline = loaded.baseline;
  const TraceSummary& summary = loaded.summary;
  RunSpec spec = api::ReplaySpec(loaded, f.request);
  // The script and the decision log come from observers on the one replay.
  std::optional<ScriptedRun> scripted;
  std::optional<DecisionLogWriter> log;
  RunRecord run;
  {
    ProgressBar bar("replay", std::chrono::seconds(1));
    ReplayProgress progress(bar, trace.program.size(),
                            spec.overhead_limit ? "" : ReplayProgress::kLimitHint);
    ReplayConfig config = ConfigFor(spec, baseline);
    config.watcher = &progress.watcher(0);
    if (!f.record.empty())
      config.observer =
          &log.emplace(f.record, trace, DecisionLogHeaderFor(spec, baseline, summary.log));
    if (!f.emit_script.empty()) {
      scripted = ScriptOfRun(trace, config);
      run = RecordOf(spec, baseline, std::move(scripted->run));  // only the script is read later
    } else {
      run = RecordOf(spec, baseline, Replay(trace, config));
    }
  }
  if (log) log->Finish(run);
  if (!spec.overrides.empty() && spec.overrides.back().first >= run.result.heuristic_evictions)
    throw Error(
        fmt::format("--override at decision {} was never taken: the run made {} decisions ({})",
                    spec.overrides.back().first, run.result.heuristic_evictions,
                    OutcomeName(run.result.outcome)));
  if (scripted)
    SaveEvictionScript(
        f.emit_script, trace, scripted->script,
        {fmt::format("dtrcheck eviction script: {} at budget {} on {} ({})", spec.heuristic->name,
                     run.result.budget, summary.log, OutcomeName(run.result.outcome)),
         fmt::format("valid at any budget >= {} (the run's peak)", run.result.max_memory)});
  if (f.json) {
    nlohmann::ordered_json j = RunJson(summary, run, &trace);
    if (f.storages >= 0) j["storage_evictions"] = StorageEvictionsJson(trace, run.result);
    std::cout << j.dump() << "\n";
  } else {
    PrintRunText(std::cout, summary, run, &trace);
    if (f.storages >= 0) PrintStorageEvictionsText(std::cout, trace, run.result, f.storages);
  }
  return f.fail_on_oom && run.result.outcome != Outcome::kPass ? kExitNegative : kExitSuccess;
}

void AddSweepFlags(CLI::App* cmd, SweepFlags& f) {
  api::SweepRequest& r = f.request;
  AddTraceArgument(cmd, f.trace);
  cmd->add_option("--ratios", r.ratios, "A:B:STEP (decimal grid) or r1,r2,...")
      ->required()
      ->type_name("GRID")
      ->check(RatioGridText());
  AddReplayFlags(cmd, r.settings, /*many_heuristics=*/true);
  AddJsonFlag(cmd, f.json, kRunJsonHelp);
  cmd->add_flag("--csv", f.csv, "one CSV row per run, with the --json field names");
  AddJobsFlag(cmd, r.jobs);
  AddCheckpointFlag(cmd, r.checkpoint,
                    "append each finished run to FILE; rerun with the same FILE to replay only the "
                    "runs it lacks (docs/checkpoint.md)");
}

int RunSweep(const SweepFlags& f) {
  if (f.json && f.csv) throw Error("sweep takes --json or --csv, not both");
  api::Validate(f.request);
  api::LoadedTrace trace = api::LoadTraceFile(f.trace);
  std::vector<RunRecord> runs;
  {
    ProgressBar bar("sweep");
    GridProgress grid(trace.trace.program.size(),
                      f.request.settings.overhead_limit ? "" : ReplayProgress::kLimitHint,
                      /*name_heuristics=*/f.request.settings.heuristics.size() > 1);
    grid.SetBar(&bar);
    runs = api::Sweep(
        trace, f.request, [&](size_t d, size_t t) { grid.Done(d, t); }, &grid);
  }
  PrintRuns(trace.trace, trace.summary, runs, f.json, f.csv);
  return 0;
}

}  // namespace dtr::cli
