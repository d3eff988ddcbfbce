#include "cli/commands.h"

#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "checker/eviction_script.h"
#include "checker/heuristic.h"
#include "checker/ratio_grid.h"
#include "checker/replay.h"
#include "checker/sweep.h"
#include "cli/progress.h"
#include "diagnose/decision_log.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "reports/run_report.h"

namespace dtr::cli {

namespace {

// Flags shared by every command that replays.
struct ReplayFlags {
  std::string trace;
  std::vector<std::string> heuristics{"DTR"};
  std::string runtime = "RuntimeV2EagerOptimized";
  double overhead_limit = 0;  // 0: none
  uint64_t seed = 0;
  int jobs = 0;
  bool json = false;
};

void AddTrace(CLI::App* cmd, ReplayFlags& f) {
  cmd->add_option("trace", f.trace, "DTR execution log (JSON lines)")->required();
}

void AddReplayFlags(CLI::App* cmd, ReplayFlags& f, bool many_heuristics) {
  if (many_heuristics)
    cmd->add_option("--heuristic", f.heuristics, "eviction heuristic(s), simrd's names (default DTR)")
        ->delimiter(',');
  else
    cmd->add_option("--heuristic", f.heuristics[0], "eviction heuristic, simrd's name (default DTR)");
  cmd->add_option("--runtime", f.runtime, "RuntimeV2EagerOptimized (default), RuntimeV2Optimized, RuntimeV1, ...");
  cmd->add_option("--overhead-limit", f.overhead_limit,
                  "end a run as 'thrash' once remat compute exceeds baseline compute * (X - 1)");
  cmd->add_option("--seed", f.seed, "seed of RandomStorage / AbRandom (own RNG, not Python's)");
  cmd->add_flag("--json", f.json, "one JSON object per run, with the field names of simrd's reference files");
}

RunSpec BaseSpec(const ReplayFlags& f, const std::string& heuristic) {
  RunSpec s;
  s.heuristic = &FindHeuristic(heuristic);
  s.runtime = ParseRuntime(f.runtime);
  if (f.overhead_limit != 0) {
    if (!(f.overhead_limit >= 1)) throw Error(fmt::format("--overhead-limit must be at least 1, got {}", f.overhead_limit));
    s.overhead_limit = f.overhead_limit;
  }
  s.seed = f.seed;
  return s;
}

void PrintRuns(const TraceSummary& summary, const std::vector<RunRecord>& runs, bool json) {
  if (json) {
    for (const RunRecord& r : runs) std::cout << RunJson(summary, r).dump() << "\n";
  } else if (runs.size() == 1) {
    PrintRunText(std::cout, summary, runs[0]);
  } else {
    PrintSweepText(std::cout, summary, runs);
  }
}

}  // namespace

void RegisterReplayCommands(CLI::App& app, Actions& actions) {
  // info
  {
    auto f = std::make_shared<ReplayFlags>();
    CLI::App* cmd = app.add_subcommand("info", "parse a trace and print its size and simrd baseline");
    AddTrace(cmd, *f);
    cmd->callback([f, &actions] {
      actions.push_back([f] {
        Trace trace = LoadTrace(f->trace);
        TraceSummary summary = Summarize(f->trace, ComputeBaseline(trace));
        PrintTraceInfo(std::cout, trace, summary);
        return 0;
      });
    });
  }
  // replay
  {
    struct Flags : ReplayFlags {
      std::string ratio;
      int64_t budget = -1;
      std::string emit_script;
      int storages = -1;
      std::string record;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* cmd = app.add_subcommand("replay", "replay a trace under one budget, exactly as simrd does");
    AddTrace(cmd, *f);
    cmd->add_option("--ratio", f->ratio, "budget as a fraction of the baseline peak memory, e.g. 0.102");
    cmd->add_option("--budget", f->budget, "budget in bytes (overrides --ratio)");
    cmd->add_option("--emit-script", f->emit_script,
                    "write the run's heuristic evictions as an eviction script (docs/eviction_script.md)");
    cmd->add_option("--storages", f->storages,
                    "also list per-storage eviction counts, the N most evicted (0: all; JSON: all)")
        ->expected(0, 1)
        ->default_str("20");
    AddReplayFlags(cmd, *f, false);
    cmd->add_option("--record", f->record,
                    "write every decision point and eager eviction to FILE (gzip'd JSON lines, docs/decision_log.md)");
    cmd->callback([f, &actions] {
      actions.push_back([f] {
        if (f->ratio.empty() && f->budget < 0) throw Error("replay needs --ratio R or --budget BYTES");
        RunSpec spec = BaseSpec(*f, f->heuristics[0]);
        if (!f->ratio.empty()) spec.ratio = ParseRatio(f->ratio);
        if (f->budget >= 0) spec.budget = f->budget;
        Trace trace = LoadTrace(f->trace);
        Baseline baseline = ComputeBaseline(trace);
        TraceSummary summary = Summarize(f->trace, baseline);
        RunRecord run = f->record.empty() ? RunOne(trace, baseline, spec)
                                          : RunAndRecord(trace, baseline, spec, f->record, summary.log);
        if (!f->emit_script.empty()) {
          // A second, identical replay that collects the heuristic's evictions.
          ScriptedRun sr = ScriptOfRun(trace, ConfigFor(spec, baseline));
          SaveEvictionScript(f->emit_script, trace, sr.script,
                             {fmt::format("dtrcheck eviction script: {} at budget {} on {} ({})", spec.heuristic->name,
                                          sr.run.budget, summary.log, OutcomeName(sr.run.outcome)),
                              fmt::format("valid at any budget >= {} (the run's peak)", sr.run.max_memory)});
        }
        if (f->json) {
          nlohmann::ordered_json j = RunJson(summary, run);
          if (f->storages >= 0) j["storage_evictions"] = StorageEvictionsJson(trace, run.result);
          std::cout << j.dump() << "\n";
        } else {
          PrintRunText(std::cout, summary, run);
          if (f->storages >= 0) PrintStorageEvictionsText(std::cout, trace, run.result, f->storages);
        }
        return 0;
      });
    });
  }
  // sweep
  {
    struct Flags : ReplayFlags {
      std::string ratios;
    };
    auto f = std::make_shared<Flags>();
    CLI::App* cmd = app.add_subcommand("sweep", "replay a trace at many budgets (and heuristics), in parallel");
    AddTrace(cmd, *f);
    cmd->add_option("--ratios", f->ratios, "A:B:STEP (decimal grid) or r1,r2,...")->required();
    AddReplayFlags(cmd, *f, true);
    cmd->add_option("-j,--jobs", f->jobs, "worker threads (default: one per core)");
    cmd->callback([f, &actions] {
      actions.push_back([f] {
        std::vector<Ratio> ratios = ParseRatios(f->ratios);
        std::vector<RunSpec> specs;
        for (const std::string& h : f->heuristics) {
          RunSpec base = BaseSpec(*f, h);
          for (const Ratio& r : ratios) {
            RunSpec s = base;
            s.ratio = r;
            specs.push_back(s);
          }
        }
        Trace trace = LoadTrace(f->trace);
        Baseline baseline = ComputeBaseline(trace);
        TraceSummary summary = Summarize(f->trace, baseline);
        std::vector<RunRecord> runs;
        {
          ProgressBar bar("sweep");
          runs = RunMany(trace, baseline, specs, f->jobs, [&](size_t d, size_t t) { bar.Update(d, t); });
        }
        PrintRuns(summary, runs, f->json);
        return 0;
      });
    });
  }
}

}  // namespace dtr::cli
