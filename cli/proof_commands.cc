#include "cli/proof_commands.h"

#include <fmt/core.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "checker/engine/heuristic.h"
#include "checker/proofs/eviction_script.h"
#include "checker/proofs/schedule_checker.h"
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

// The replays of frontier and explain have no overhead limit: a heuristic
// that thrashes there goes on until its OOM.
constexpr const char* kNoLimitHint = "(thrashing? the run goes on to its end)";

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
  cmd->add_option("--next-use-computations", r.next_use_computations,
                  "the offline next-use witness gives up after N computations (default: 4 per "
                  "program step, at least 50,000; a count, not a time)")
      ->check(InRange(api::kNextUseComputations));
  cmd->add_flag("--verbose", f.verbose, "list every witness attempt and Z3 query");
  cmd->add_option("--save-script", r.save_script, "write the verified witness script to FILE")
      ->type_name("FILE");
  cmd->add_flag_callback("--no-cut", [&r] { r.cut = false; },
                         "do not try the keep-or-recompute cut for an inherent proof (checker/proofs/cut_bound.h)");
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
  api::FrontierRequest& r = f.request;
  AddTraceArgument(cmd, f.trace);
  AddBudgetFlags(cmd, r.budget);
  AddRuntimeFlag(cmd, r.settings, RuntimeChoice::kV2Only);
  AddJsonFlag(cmd, f.json, "one JSON object (docs/proof_json.md)");
  AddHeuristicFlag(cmd, r.settings);
  cmd->add_option("--at", r.at, "decision index (default: the run's OOM)")
      ->check(InRange(api::kDecision));
}

int RunFrontier(const FrontierFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  api::FrontierAnswer a;
  {
    ProgressBar bar("frontier", std::chrono::seconds(1));
    ReplayProgress progress(bar, t.trace.program.size(), kNoLimitHint);
    a = api::Frontier(t, f.request, &progress.watcher(0));
  }
  if (f.json)
    std::cout << api::FrontierJson(t, a).dump() << "\n";
  else
    PrintFrontierText(std::cout, t.trace, a.header, a.frontier);
  return 0;
}

void AddCheckFlags(CLI::App* cmd, CheckFlags& f) {
  api::CheckRequest& r = f.request;
  AddTraceArgument(cmd, f.trace);
  AddBudgetFlags(cmd, r.budget);
  AddRuntimeFlag(cmd, r.runtime, RuntimeChoice::kV2Only);
  AddJsonFlag(cmd, f.json, "one JSON object (docs/proof_json.md)");
  cmd->add_option("--script", r.script, "eviction script (docs/eviction_script.md)")
      ->required()
      ->type_name("FILE");
}

int RunCheck(const CheckFlags& f) {
  api::Validate(f.request);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  api::CheckAnswer a = api::Check(t, f.request);
  if (f.json)
    std::cout << api::CheckJson(t, f.request, a).dump() << "\n";
  else
    PrintScheduleCheckText(std::cout, t.trace, a.header, f.request.script, a.entries, a.check);
  return a.check.passed() ? kExitSuccess : kExitNegative;
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
  api::BoundsRequest& r = f.request;
  BoundsOptions& o = r.options;
  AddTraceArgument(cmd, f.trace);
  AddHeuristicsFlag(cmd, r.settings);
  AddRuntimeFlag(cmd, r.settings, RuntimeChoice::kV2Only);
  cmd->add_option(
         "--ratios", o.grid,
         fmt::format("coarse ratio grid A:B:STEP or r1,r2,... (default {})", BoundsOptions().grid))
      ->type_name("GRID")
      ->check(RatioGridText());
  cmd->add_option("--fine-step", o.fine_step,
                  fmt::format("finer step around each first pass (default {}; '' for none)",
                              BoundsOptions().fine_step))
      ->type_name("RATIO");
  AddOverheadLimitFlag(cmd, r.settings, "runs beyond this overhead count as not feasible");
  AddJobsFlag(cmd, o.jobs);
  AddWindowsFlag(cmd, o.windows,
                 fmt::format("Z3 windows bisected for the lower bound (default {}; 0: none)",
                             BoundsOptions().windows));
  AddWindowOpsFlag(cmd, o.window_ops);
  AddTimeoutFlag(cmd, o.limits.timeout_seconds);
  AddWorkLimitFlag(cmd, o.limits.work_limit);
  cmd->add_option("--walk-searches", o.walk_searches,
                  fmt::format("witness searches of the walk-down: prove's runs, counterfactuals, "
                              "next-use and Z3 plans below the best grid run (default {}; 0: no "
                              "walk-down): a count, so the walk finds the same on any machine and "
                              "under any load",
                              BoundsOptions().walk_searches))
      ->check(InRange(api::kWalkSearches));
  cmd->add_option("--search-seconds", o.search_seconds,
                  "a time limit on the walk-down, which then also cuts a search in flight and "
                  "its Z3 calls (default: no time limit; 0: no walk-down)")
      ->check(InRange(api::kSearchSeconds));
  cmd->add_option("--walk", r.walk,
                  "walk-down budgets: gallop (a stride below the best peak, doubled after "
                  "each find; default), step (one byte below) or bisect (halfway to the "
                  "highest failed budget)")
      ->check(CLI::IsMember({"step", "gallop", "bisect"}))
      ->type_name("WALK");
  cmd->add_option("--plan-seconds", o.plan_seconds,
                  "seconds for checkpoint plans: low-memory scripts built from the top, "
                  "independent of any heuristic (default: no time limit; 0: none)")
      ->check(InRange(api::kPlanSeconds));
  cmd->add_option(
         "--plan-work", o.plan_work,
         fmt::format("computations the checkpoint plans may follow in all (default {}; 0: "
                     "no limit): a count, so the plans found are the same on any machine and "
                     "under any load",
                     BoundsOptions().plan_work))
      ->check(InRange(api::kPlanWork));
  cmd->add_option("--run-max-evals", o.run_max_evals,
                  fmt::format("stop each grid run once its heuristic evaluations plus "
                              "computations pass N, as unknown (default {}; 0: no cap)",
                              BoundsOptions().run_max_evals))
      ->check(InRange(api::kMaxEvals));
  AddValueOption(cmd, "--plan-max-overhead", o.plan_max_overhead,
                 "compute overhead a checkpoint plan may have (default: any)")
      ->check(InRange(api::kPlanMaxOverhead));
  cmd->add_flag("--plans-only", o.plans_only,
                "checkpoint plans only: no heuristic grid and no walk-down");
  cmd->add_option("--save-script", r.save_script,
                  "write the best verified schedule's script to FILE")
      ->type_name("FILE");
  cmd->add_option("--cut-seconds", o.cut_seconds,
                  "seconds for the keep-or-recompute cut's bisection of the lower bound "
                  "(default: no time limit, to its resolution; 0: none)")
      ->check(InRange(api::kCutSeconds));
  AddStoreFlag(cmd, r.store);
  AddJsonFlag(cmd, f.json, "one JSON object (docs/proof_json.md)");
  cmd->add_flag("--csv", f.csv, "one CSV row per heuristic (the --json heuristics)");
}

int RunBounds(const BoundsFlags& f) {
  if (f.json && f.csv) throw Error("bounds takes --json or --csv, not both");
  api::Validate(f.request);
  api::LoadedTrace t = api::LoadTraceFile(f.trace);
  api::BoundsAnswer a;
  {
    std::unique_ptr<ProgressBar> bar;
    std::string stage;
    // The grid stages show their runs under way by ratio (the stage names the
    // heuristic); each run ends at --run-max-evals unless that is 0.
    const bool endless = f.request.options.run_max_evals <= 0 && !f.request.settings.overhead_limit;
    GridProgress grid(t.trace.program.size(), endless ? ReplayProgress::kLimitHint : "");
    auto is_grid = [](const std::string& s) { return s.find(" grid") != std::string::npos; };
    a = api::Bounds(
        t, f.request,
        [&](const std::string& s, size_t d, size_t total) {
          if (s != stage) {
            grid.SetBar(nullptr);
            bar = std::make_unique<ProgressBar>(s);
            stage = s;
            if (is_grid(s)) grid.SetBar(bar.get());
          }
          if (is_grid(s))
            grid.Done(d, total);
          else
            bar->Update(d, total);
        },
        [&](const std::string& text) {
          if (bar) bar->Status(text);
        },
        &grid);
  }
  if (f.json)
    std::cout << api::BoundsJson(t, a).dump() << "\n";
  else if (f.csv)
    PrintCsvTable(std::cout, api::BoundsJson(t, a)["heuristics"]);
  else
    PrintBoundsText(std::cout, a.header, a.report, &t.trace);
  SaveStore(a.store.get(), a.store_changes);
  return 0;
}

}  // namespace dtr::cli
