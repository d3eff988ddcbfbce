#include "cli/proof_commands.h"

#include <fmt/core.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "checker/eviction_script.h"
#include "checker/heuristic.h"
#include "checker/ratio_grid.h"
#include "checker/schedule_checker.h"
#include "checker/sweep.h"
#include "cli/exit_status.h"
#include "cli/flag_ranges.h"
#include "cli/progress.h"
#include "cli/replay_flags.h"
#include "diagnose/certificate_records.h"
#include "diagnose/certificate_store.h"
#include "diagnose/feasibility_bounds.h"
#include "diagnose/oom_classification.h"
#include "diagnose/remat_frontier.h"
#include "diagnose/report_model.h"
#include "model/error.h"
#include "reports/csv_table.h"
#include "reports/proof_report.h"
#include "reports/run_report.h"

namespace dtr::cli {

namespace {

void AddProofBudgetFlags(CLI::App* cmd, ProofBudgetFlags& f) {
  AddTraceArgument(cmd, f.trace);
  AddBudgetFlags(cmd, f.budget);
  AddRuntimeFlag(cmd, f, RuntimeChoice::kV2Only);
  AddJsonFlag(cmd, f, "one JSON object (docs/proof_json.md)");
}

struct Loaded {
  Trace trace;
  Baseline baseline;
  ProofHeader header;
};

Loaded Load(const ProofBudgetFlags& f, const char* command) {
  api::RequireBudget(f.budget, command);
  RuntimeKind runtime = ParseRuntime(f.runtime);
  RequireRuntimeV2(runtime, command);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  Loaded l{std::move(t.trace), t.baseline, {}};
  l.header.log = t.summary.log;
  l.header.baseline = l.baseline;
  l.header.runtime = runtime;
  l.header.ratio = f.budget.budget ? std::nullopt : f.budget.ratio;
  l.header.budget = f.budget.Bytes(l.baseline.memory);
  return l;
}

// The replays of frontier and explain have no overhead limit: a heuristic
// that thrashes there goes on until its OOM.
constexpr const char* kNoLimitHint = "(thrashing? the run goes on to its end)";

// The heuristic's run that frontier and explain look at: --heuristic (named in
// the header too) on the loaded trace's runtime and budget.
ReplayConfig HeuristicRun(Loaded& l, const ReplayFlags& f) {
  l.header.heuristic = f.heuristic();
  ReplayConfig config;
  config.runtime = l.header.runtime;
  config.heuristic = &FindHeuristic(f.heuristic());
  config.budget = l.header.budget;
  return config;
}

void AddStoreFlag(CLI::App* cmd, std::optional<std::string>& store) {
  cmd->add_option_function<std::string>(
         "--store", [&store](const std::string& dir) { store = dir; },
                  "certificate store directory (docs/certificate_store.md; default "
                  "$DTRCHECK_STORE): use the certificates stored for this trace, add what this run "
                  "finds")
      ->type_name("DIR");
}

// After the answer is printed: a store that cannot be written does not take
// the finished answer with it (the error then sets exit status 3).
void SaveStore(CertificateStore* store, const std::string& changed) {
  if (!store || changed.empty()) return;
  std::cout.flush();
  if (store->Save())
    std::cerr << "certificate store " << store->path() << ": stored " << changed << "\n";
}

void AddProofFlags(CLI::App* cmd, ProofFlags& f) {
  api::ProofRequest& r = f.request;
  cmd->add_option("--witness-heuristics", r.witness_heuristics,
                  "heuristics whose runs (at and below the budget) are tried as witnesses, "
                  "comma-separated (default DTR; names as for --heuristic)")
      ->delimiter(',')
      ->type_name("NAME,...");
  AddTimeoutFlag(cmd, r.timeout);
  AddWorkLimitFlag(cmd, r.work_limit);
  AddWindowsFlag(cmd, r.windows, "Z3 windows tried for an inherent proof (default 6)");
  AddWindowOpsFlag(cmd, r.window_ops);
  cmd->add_flag_callback("--no-z3", [&r] { r.z3 = false; }, "no Z3 queries (witness plans and windows)");
  cmd->add_option("--rolling-z3", r.rolling,
                  "also try rolling Z3 plans of N operators over the whole program as witnesses "
                  "(slow; default 0: off)")
      ->check(InRange(api::kRollingOps));
  cmd->add_option("--plan-seconds", r.plan_seconds,
                  "also try checkpoint plans as witnesses, for at most this many seconds "
                  "(low-memory scripts built from the top; default 0: off)")
      ->check(InRange(api::kPlanSeconds));
  cmd->add_flag("--verbose", f.verbose, "list every witness attempt and Z3 query");
  cmd->add_option("--save-script", r.save_script, "write the verified witness script to FILE")
      ->type_name("FILE");
  cmd->add_flag_callback("--no-cut", [&r] { r.cut = false; },
                         "do not try the keep-or-recompute cut for an inherent proof (checker/cut_bound.h)");
  AddStoreFlag(cmd, r.store);
}

// Prints the verdict; exit status 1 if --expect named another one.
// Then saves what the run added to the certificate store: a store that
// cannot be written does not take the finished answer with it (the error
// then sets exit status 3).
int PrintAndStore(const api::LoadedTrace& t, const ProofFlags& f, api::ProofAnswer& a) {
  const Classification& c = a.classification;
  if (f.json)
    std::cout << api::ProofJson(t, a).dump() << "\n";
  else
    PrintClassificationText(std::cout, t.trace, a.header, c, f.verbose);
  SaveStore(a.store.get(), a.store_changes);
  return f.expect.empty() || f.expect == VerdictName(c.verdict) ? kExitSuccess : kExitNegative;
}

// trace, --ratio/--budget, --runtime (V2 only), --json.
void AddProofRequestFlags(CLI::App* cmd, ProofFlags& f) {
  AddTraceArgument(cmd, f.trace);
  AddBudgetFlags(cmd, f.request.budget);
  AddRuntimeFlag(cmd, f.request.settings, RuntimeChoice::kV2Only);
  AddJsonFlag(cmd, f.json, "one JSON object (docs/proof_json.md)");
}

void AddExpectFlag(CLI::App* cmd, ProofFlags& f, std::vector<std::string> verdicts) {
  cmd->add_option("--expect", f.expect, "exit status 1 if the verdict is another one")
      ->check(CLI::IsMember(std::move(verdicts)))
      ->type_name("VERDICT");
}

}  // namespace

void AddFrontierFlags(CLI::App* cmd, FrontierFlags& f) {
  AddProofBudgetFlags(cmd, f);
  AddHeuristicFlag(cmd, f);
  cmd->add_option("--at", f.at, "decision index (default: the run's OOM)")
      ->check(IntegerIn(0, kMaxInt64));
}

int RunFrontier(const FrontierFlags& f) {
  Loaded l = Load(f, "frontier");
  ReplayConfig config = HeuristicRun(l, f);
  RematFrontier fr;
  {
    ProgressBar bar("frontier", std::chrono::seconds(1));
    ReplayProgress progress(bar, l.trace.program.size(), kNoLimitHint);
    config.watcher = &progress.watcher(0);
    fr = f.at >= 0 ? FrontierAtDecision(l.trace, config, f.at) : FrontierAtOom(l.trace, config);
  }
  if (f.json)
    std::cout << FrontierJson(l.trace, l.header, fr).dump() << "\n";
  else
    PrintFrontierText(std::cout, l.trace, l.header, fr);
  return 0;
}

void AddCheckFlags(CLI::App* cmd, CheckFlags& f) {
  AddProofBudgetFlags(cmd, f);
  cmd->add_option("--script", f.script, "eviction script (docs/eviction_script.md)")
      ->required()
      ->type_name("FILE");
}

int RunCheck(const CheckFlags& f) {
  Loaded l = Load(f, "check");
  EvictionScript script = LoadEvictionScript(f.script, l.trace);
  ScheduleCheck c = CheckSchedule(l.trace, l.header.budget, script, l.header.runtime);
  if (f.json)
    std::cout << ScheduleCheckJson(l.trace, l.header, f.script, script.entries.size(), c).dump()
              << "\n";
  else
    PrintScheduleCheckText(std::cout, l.trace, l.header, f.script, script.entries.size(), c);
  return c.passed() ? kExitSuccess : kExitNegative;
}

void AddExplainFlags(CLI::App* cmd, ProofFlags& f) {
  f.request.kind = api::ProofKind::kExplain;
  AddProofRequestFlags(cmd, f);
  AddHeuristicFlag(cmd, f.request.settings, "eviction heuristic of the run, simrd's name");
  AddProofFlags(cmd, f);
  AddExpectFlag(cmd, f, {"policy-induced", "inherent", "undetermined"});
}

int RunExplain(const ProofFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  api::ProofAnswer a;
  {
    ProgressBar bar("explain");
    ReplayProgress progress(bar, t.trace.program.size(), kNoLimitHint);
    a = api::Prove(t, f.request, &progress.watcher(0), [&](const std::string& s) { bar.Status(s); });
  }
  return PrintAndStore(t, f, a);
}

void AddProveFlags(CLI::App* cmd, ProofFlags& f) {
  f.request.kind = api::ProofKind::kProve;
  AddProofRequestFlags(cmd, f);
  AddProofFlags(cmd, f);
  AddExpectFlag(cmd, f, {"feasible", "inherent", "undetermined"});
}

int RunProve(const ProofFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  api::ProofAnswer a;
  {
    ProgressBar bar("prove");
    a = api::Prove(t, f.request, nullptr, [&](const std::string& s) { bar.Status(s); });
  }
  return PrintAndStore(t, f, a);
}

void AddBoundsFlags(CLI::App* cmd, BoundsFlags& f) {
  AddTraceArgument(cmd, f.trace);
  AddHeuristicsFlag(cmd, f);
  AddRuntimeFlag(cmd, f, RuntimeChoice::kV2Only);
  cmd->add_option("--ratios", f.grid,
                  "coarse ratio grid A:B:STEP or r1,r2,... (default 0.01:1:0.01)")
      ->type_name("GRID")
      ->check(RatioGridText());
  cmd->add_option("--fine-step", f.fine_step,
                  "finer step around each first pass (default 0.001; '' for none)")
      ->type_name("RATIO");
  AddOverheadLimitFlag(cmd, f, "runs beyond this overhead count as not feasible");
  AddJobsFlag(cmd, f);
  AddWindowsFlag(cmd, f.windows, "Z3 windows bisected for the lower bound (default 3; 0: none)");
  AddWindowOpsFlag(cmd, f.window_ops);
  AddTimeoutFlag(cmd, f.timeout);
  AddWorkLimitFlag(cmd, f.work_limit);
  cmd->add_option("--search-seconds", f.search_seconds,
                  "seconds for the walk-down: prove's witness searches (runs, counterfactuals, "
                  "next-use, Z3 plans) below the best grid run (default 60; 0: none)")
      ->check(NumberFrom(0));
  cmd->add_option("--walk", f.walk,
                  "walk-down budgets: gallop (a stride below the best peak, doubled after "
                  "each find; default), step (one byte below) or bisect (halfway to the "
                  "highest failed budget)")
      ->check(CLI::IsMember({"step", "gallop", "bisect"}))
      ->type_name("WALK");
  cmd->add_option("--plan-seconds", f.plan_seconds,
                  "seconds for checkpoint plans: low-memory scripts built from the top, "
                  "independent of any heuristic (default: no time limit; 0: none)")
      ->check(NumberFrom(0));
  cmd->add_option("--plan-work", f.plan_work,
                  "computations the checkpoint plans may follow in all (default 500000000; 0: "
                  "no limit): a count, so the plans found are the same on any machine and "
                  "under any load")
      ->check(NumberFrom(0));
  cmd->add_option("--plan-max-overhead", f.plan_max_overhead,
                  "compute overhead a checkpoint plan may have (default: any)")
      ->check(NumberFrom(1));
  cmd->add_flag("--plans-only", f.plans_only,
                "checkpoint plans only: no heuristic grid and no walk-down");
  cmd->add_option("--save-script", f.save_script,
                  "write the best verified schedule's script to FILE")
      ->type_name("FILE");
  cmd->add_option("--cut-seconds", f.cut_seconds,
                  "seconds for the keep-or-recompute cut's bisection of the lower bound "
                  "(default: no time limit, to its resolution; 0: none)")
      ->check(NumberFrom(0));
  AddStoreFlag(cmd, f.store);
  AddJsonFlag(cmd, f, "one JSON object (docs/proof_json.md)");
  cmd->add_flag("--csv", f.csv, "one CSV row per heuristic (the --json heuristics)");
}

namespace {

// bounds --save-script: the best verified schedule, with where it came from.
void SaveBestSchedule(const std::string& path, const Trace& trace, const ProofHeader& h,
                      const BoundsReport& r) {
  if (path.empty()) return;
  if (!r.best) throw Error("no verified schedule to save (no run passed and no plan completed)");
  SaveEvictionScript(path, trace, r.best->script,
                     {fmt::format("dtrcheck eviction script for {}", h.log),
                      fmt::format("passes the schedule checker at budget {} ({})", r.best->budget,
                                  RuntimeName(h.runtime)),
                      fmt::format("source: {}: {}", r.best->source, r.best->description)});
}

}  // namespace

int RunBounds(const BoundsFlags& f) {
  if (f.json && f.csv) throw Error("bounds takes --json or --csv, not both");
  BoundsOptions o;
  if (f.plans_only && f.plan_seconds == 0) throw Error("--plans-only needs --plan-seconds above 0");
  o.plan_seconds = f.plan_seconds;
  o.plan_work = f.plan_work;
  if (f.plan_max_overhead > 0) o.plan_max_overhead = f.plan_max_overhead;
  o.plans_only = f.plans_only;
  o.search_seconds = f.search_seconds;
  o.cut_seconds = f.cut_seconds;
  o.walk = ParseWalkMode(f.walk);
  for (const std::string& h : f.heuristics) o.heuristics.push_back(&FindHeuristic(h));
  o.runtime = ParseRuntime(f.runtime);
  RequireRuntimeV2(o.runtime, "bounds");
  o.grid = f.grid;
  ParseRatios(o.grid);  // bad grids fail before any work
  o.fine_step = f.fine_step;
  if (!o.fine_step.empty()) ParseRatio(o.fine_step);
  o.overhead_limit = f.overhead_limit;
  o.jobs = f.jobs;
  o.windows = f.windows;
  o.window_ops = f.window_ops;
  o.limits.timeout_seconds = f.timeout;
  o.limits.work_limit = f.work_limit;
  api::LoadedTrace loaded = api::LoadTraceFile(f.trace);
  const Trace& trace = loaded.trace;
  const Baseline& baseline = loaded.baseline;
  std::unique_ptr<CertificateStore> store =
      OpenStore(StoreDirectory(f.store.value_or("")), f.trace, trace, baseline.memory);
  ProofHeader h;
  h.log = loaded.summary.log;
  h.baseline = baseline;
  h.runtime = o.runtime;
  BoundsReport r;
  {
    std::unique_ptr<ProgressBar> bar;
    std::string stage;
    r = ComputeBounds(
        trace, baseline, o,
        [&](const std::string& s, size_t d, size_t t) {
          if (s != stage) {
            bar = std::make_unique<ProgressBar>(s);
            stage = s;
          }
          bar->Update(d, t);
        },
        [&](const std::string& text) {
          if (bar) bar->Status(text);
        });
  }
  SaveBestSchedule(f.save_script, trace, h, r);
  const std::string changed = store ? RecordBounds(*store, trace, o.runtime, r, o.limits) : "";
  if (f.json)
    std::cout << BoundsJson(h, r, &trace).dump() << "\n";
  else if (f.csv)
    PrintCsvTable(std::cout, BoundsJson(h, r, &trace)["heuristics"]);
  else
    PrintBoundsText(std::cout, h, r, &trace);
  SaveStore(store.get(), changed);
  return 0;
}

}  // namespace dtr::cli
