// The library's front door: for each command that both the CLI and the Python
// module offer, one request struct and one function that validates it, opens
// the checkpoint or certificate store it names, runs, and returns plain
// results. The CLI fills a request from its flags and renders the result
// (cli/); the Python module fills the same request from keyword arguments and
// converts the result (python/core.cc). Defaults live in the request structs,
// ranges in api/option_ranges.h, so both callers refuse the same values with
// the same message (the CLI's line after "dtrcheck: "). A new option is one
// field here, filled by each caller.
//
// Every function throws dtr::Error (model/error.h) for a bad request or a bad
// trace, before any replay where it can. Validate(request) checks a request
// without a trace, so that the CLI refuses bad flags before it reads a file;
// the run functions call it again.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/loaded_trace.h"
#include "api/option_ranges.h"
#include "api/replay_choice.h"
#include "checker/drivers/budget_atlas.h"
#include "checker/drivers/budget_choice.h"
#include "checker/drivers/sweep.h"
#include "diagnose/ablation.h"
#include "diagnose/certificate_store.h"
#include "diagnose/checkpoint_plan.h"
#include "diagnose/counterfactual.h"
#include "diagnose/divergence.h"
#include "diagnose/feasibility_bounds.h"
#include "diagnose/instability_scan.h"
#include "diagnose/oom_classification.h"
#include "diagnose/remat_frontier.h"
#include "diagnose/report_model.h"
#include "reports/proof_report.h"

namespace dtr::api {

// `dtrcheck info`: the trace's size and simrd baseline.
nlohmann::ordered_json InfoJson(const LoadedTrace& trace);

// Throws "COMMAND needs --ratio R or --budget BYTES" when the budget has
// neither, and the --budget range's message for negative bytes.
void RequireBudget(const BudgetChoice& budget, const std::string& command);
// One budget as the ratio text ("0.101") or bytes; `command` names the
// command in the message when neither or both are given.
BudgetChoice ChooseBudget(const std::optional<std::string>& ratio, std::optional<int64_t> bytes,
                          const std::string& command);

// `dtrcheck replay`: one run, exactly as simrd does it.
struct ReplayRequest {
  BudgetChoice budget;
  ReplayChoice settings;
  // "DECISION=TENSOR": that decision evicts TENSOR's storage instead.
  std::vector<std::string> overrides;
};
void Validate(const ReplayRequest& request);
// The run the request describes, its overrides resolved on the trace.
RunSpec ReplaySpec(const LoadedTrace& trace, const ReplayRequest& request);
RunRecord Replay(const LoadedTrace& trace, const ReplayRequest& request);
// RunJson (reports/run_report.h) of a run of `trace`.
nlohmann::ordered_json RunJson(const LoadedTrace& trace, const RunRecord& run);

// `dtrcheck sweep`: every heuristic at every ratio of the grid.
struct SweepRequest {
  std::string ratios;  // A:B:STEP or r1,r2,...
  ReplayChoice settings;
  int jobs = 0;            // 0: one per core; else kJobs
  std::string checkpoint;  // "": none (docs/checkpoint.md)
};
void Validate(const SweepRequest& request);
std::vector<RunRecord> Sweep(const LoadedTrace& trace, const SweepRequest& request,
                             const ProgressFn& progress = nullptr, RunWatch* watch = nullptr);

// `dtrcheck atlas`: every budget interval of a range on which the replay is
// identical.
struct AtlasRequest {
  std::string ratios;   // "A:B", or a grid (A:B:STEP, r1,r2,...): its lowest to highest ratio; or
  std::string budgets;  // "LO:HI" in bytes
  ReplayChoice settings;
  int jobs = 0;
  size_t max_runs = 0;                     // kMaxRuns; 0: no cap on replays
  int64_t max_evals = kDefaultAtlasEvals;  // kMaxEvals; 0: no cap on heuristic evaluations
  std::string checkpoint;
};
struct AtlasAnswer {
  RunSpec spec;  // the settings walked
  // When a cap stopped the walk, the complete atlas of the part walked, with
  // asked_hi set (WalkedPart).
  BudgetAtlas atlas;
};
void Validate(const AtlasRequest& request);
AtlasAnswer Atlas(const LoadedTrace& trace, const AtlasRequest& request,
                  const AtlasProgressFn& progress = nullptr);
// AtlasJson (reports/atlas_report.h) of the answer.
nlohmann::ordered_json AtlasJson(const LoadedTrace& trace, const AtlasAnswer& answer);

// `dtrcheck scan`: regimes, cliffs and feasibility inversions of a grid.
struct ScanRequest {
  std::string ratios;
  ReplayChoice settings;
  int jobs = 0;
  double cliff_factor = kDefaultCliffFactor;  // kCliffFactor
  bool refine = false;
  bool exact = false;
  int max_walk = 1000;  // kMaxWalk
  std::string checkpoint;
};
void Validate(const ScanRequest& request);
// `watch` sees the grid's replays (not an exact scan's walk).
ScanResult Scan(const LoadedTrace& trace, const ScanRequest& request,
                const ProgressFn& progress = nullptr, RunWatch* watch = nullptr);
// ScanJson (reports/instability_report.h) of the result.
nlohmann::ordered_json ScanJson(const LoadedTrace& trace, const ScanResult& scan);

// `dtrcheck diff`: two runs of one heuristic side by side, from the first
// decision where they part (diagnose/divergence.h).
struct DiffRequest {
  std::string ratios;   // "A,B", or
  std::string budgets;  // "A,B" in bytes
  ReplayChoice settings;
};
void Validate(const DiffRequest& request);
// `watchers` (may be null) watch the two runs, from two threads.
RunComparison Diff(const LoadedTrace& trace, const DiffRequest& request,
                   std::array<ReplayObserver*, 2> watchers = {});

// `dtrcheck blame`: the fewest decisions of a run that, flipped, make it pass
// or reach the regime of a reference run (diagnose/counterfactual.h).
struct BlameRequest {
  std::string ratio;    // the run to blame
  std::string against;  // "": none; else the reference ratio
  ReplayChoice settings;
  BlameOptions options;  // its jobs: 0, one per core
};
void Validate(const BlameRequest& request);
BlameResult Blame(const LoadedTrace& trace, const BlameRequest& request,
                  const ProgressFn& progress = nullptr);

// `dtrcheck ablate`: the heuristic's scan with each score term taken out
// (diagnose/ablation.h).
struct AblateRequest {
  std::string ratios;  // A:B:STEP or r1,r2,...
  ReplayChoice settings;
  int jobs = 0;
  double cliff_factor = kDefaultCliffFactor;  // kCliffFactor
  int64_t max_evals =
      kDefaultAblateEvals;  // kMaxEvals; shared by the runs (diagnose/ablation.h); 0: none
};
void Validate(const AblateRequest& request);
// `watch` sees the runs as they go.
AblationResult Ablate(const LoadedTrace& trace, const AblateRequest& request,
                      const ProgressFn& progress = nullptr, RunWatch* watch = nullptr);

// `dtrcheck explain` (why a heuristic's run ran out of memory) and `dtrcheck
// prove` (whether any eviction order fits): a verdict with its certificate.
enum class ProofKind { kExplain, kProve };
struct ProofRequest {
  ProofKind kind = ProofKind::kExplain;
  BudgetChoice budget;
  ReplayChoice settings;  // explain: the heuristic of the run; a RuntimeV2 runtime
  std::vector<std::string> witness_heuristics;
  bool z3 = true;
  double timeout = 0;                         // kTimeout (0: none)
  uint32_t work_limit = kDefaultZ3WorkLimit;  // kWorkLimit (0: none)
  int32_t windows = 6;      // kWindows
  int32_t window_ops = 6;   // kWindowOps
  int32_t rolling = 0;      // rolling Z3 plans of this many operators (0: off)
  double plan_seconds = 0;  // checkpoint plans as witnesses (0: off)
  // kNextUseComputations; 0: sized to the trace (NextUseComputationsFor)
  int64_t next_use_computations = 0;
  bool cut = true;
  std::string save_script;  // "": none; else the verified witness script goes there
  // The certificate store directory: none for $DTRCHECK_STORE, "" for none.
  std::optional<std::string> store;
};
struct ProofAnswer {
  std::string kind;  // "explain" or "prove"
  ProofHeader header;
  Classification classification;
  // The store opened for the request, with what this run found recorded in
  // it but not yet saved (see SaveProofStore), and what changed ("": nothing).
  std::unique_ptr<CertificateStore> store;
  std::string store_changes;
};
void Validate(const ProofRequest& request);
ProofAnswer Prove(const LoadedTrace& trace, const ProofRequest& request,
                  ReplayObserver* watcher = nullptr, const ClassifyProgress& progress = nullptr);
// ClassificationJson (reports/proof_report.h) of the answer.
nlohmann::ordered_json ProofJson(const LoadedTrace& trace, const ProofAnswer& answer);
// Saves what the run added to the store; false when nothing changed. Throws
// Error when the store cannot be written: callers give the answer first.
bool SaveProofStore(ProofAnswer& answer);

// `dtrcheck frontier`: the pinned rematerialization frontier of a heuristic's
// run at its OOM, or at one of its decisions (diagnose/remat_frontier.h).
struct FrontierRequest {
  BudgetChoice budget;
  ReplayChoice settings;  // the run's heuristic, on a RuntimeV2 runtime
  int64_t at = -1;        // a decision index; -1: the run's OOM
};
struct FrontierAnswer {
  ProofHeader header;
  RematFrontier frontier;
};
void Validate(const FrontierRequest& request);
// `watcher` sees the run (it has no overhead limit: a thrashing run goes on
// to its end).
FrontierAnswer Frontier(const LoadedTrace& trace, const FrontierRequest& request,
                        ReplayObserver* watcher = nullptr);
nlohmann::ordered_json FrontierJson(const LoadedTrace& trace, const FrontierAnswer& answer);

// `dtrcheck check`: whether an eviction script (docs/eviction_script.md)
// runs the program within the budget.
struct CheckRequest {
  BudgetChoice budget;
  std::string runtime = kDefaultRuntime;  // a RuntimeV2 runtime
  std::string script;                     // the script's file
};
struct CheckAnswer {
  ProofHeader header;
  size_t entries = 0;  // in the script
  ScheduleCheck check;
};
void Validate(const CheckRequest& request);
CheckAnswer Check(const LoadedTrace& trace, const CheckRequest& request);
nlohmann::ordered_json CheckJson(const LoadedTrace& trace, const CheckRequest& request,
                                 const CheckAnswer& answer);

// `dtrcheck bounds`: the smallest budget any schedule fits, bracketed by a
// proven lower bound and a verified schedule (diagnose/feasibility_bounds.h).
struct BoundsRequest {
  // The heuristics run on the grid (several allowed), a RuntimeV2 runtime and
  // the overhead limit beyond which a run counts as thrashing.
  ReplayChoice settings;
  std::string walk = "gallop";  // step, gallop or bisect (WalkMode)
  // Everything else, with its defaults; its heuristics, runtime, overhead
  // limit and walk are filled from the fields above.
  BoundsOptions options;
  std::string save_script;           // "": none; else the best verified schedule
  std::optional<std::string> store;  // as ProofRequest::store
};
struct BoundsAnswer {
  ProofHeader header;
  BoundsReport report;
  // As ProofAnswer's: the store, with what this run found recorded but not saved.
  std::unique_ptr<CertificateStore> store;
  std::string store_changes;
};
void Validate(const BoundsRequest& request);
// stage(name, done, total) as each part of the search goes; status(text) for
// what a long part is doing (ComputeBounds).
// `watch` sees the heuristics' grid runs as they go.
BoundsAnswer Bounds(const LoadedTrace& trace, const BoundsRequest& request,
                    const BoundsProgress& stage = nullptr, const BoundsStatus& status = nullptr,
                    RunWatch* watch = nullptr);
nlohmann::ordered_json BoundsJson(const LoadedTrace& trace, const BoundsAnswer& answer);

// `dtrcheck plan`: which modules of a captured PyTorch step to wrap in
// torch.utils.checkpoint to fit the budget (diagnose/checkpoint_plan.h).
struct PlanRequest {
  BudgetChoice budget;
  std::string save_script;  // "": none; else the plan's evictions as an eviction script
};
void Validate(const PlanRequest& request);
CheckpointPlan Plan(const LoadedTrace& trace, const PlanRequest& request);
// PlanJson (reports/plan_report.h) of the plan.
nlohmann::ordered_json PlanJson(const LoadedTrace& trace, const CheckpointPlan& plan);

// `dtrcheck report`: the budget report as JSON, Markdown and HTML files.
struct ReportRequest {
  std::string ratios;  // "": DefaultReportRatios (diagnose/report_model.h), or the demo's grid
  std::string out = "out/report";
  std::string figures;  // "": no standalone SVG files
  ReplayChoice settings;
  std::string timeline_ratio;  // "": the default pair of runs
  double cliff_factor = kDefaultCliffFactor;
  int jobs = 0;
  bool atlas = true;
  // The atlas's cap (kAtlasMaxRuns, kAtlasMaxEvals); unset: kDefaultReportAtlasCap's.
  std::optional<size_t> atlas_max_runs;
  std::optional<int64_t> atlas_max_evals;
  size_t max_verdicts = 0;  // kMaxVerdicts; 0: sized to the trace (DefaultReportCaps)
  bool refine = true;
  bool proofs = true;
  bool divergence = true;
  // The verdicts' Z3 options: no Z3 unless z3, then explain's defaults. Each
  // limit set without z3 is refused.
  bool z3 = false;
  std::optional<double> timeout;
  std::optional<uint32_t> work_limit;
  std::optional<int32_t> windows;
  std::optional<int32_t> window_ops;
  bool cut = true;
  std::optional<std::string> store;  // as ProofRequest::store; read only
};
struct ReportAnswer {
  std::string plan;  // what the report did, and how to go further (ReportPlan)
  BudgetReport report;
  std::vector<std::string> files;  // written, in order
};
void Validate(const ReportRequest& request);
// On `trace`, or on the embedded demo when its path is "" (LoadDemoTrace):
// then demo.log is written beside the report, for the commands it prints.
// `stage`, `progress` and `watch` as ReportOptions' (diagnose/report_model.h);
// `planned` is given ReportAnswer::plan before any replay, so that a caller
// can say up front what the report will do.
ReportAnswer Report(const LoadedTrace& trace, const ReportRequest& request,
                    const std::function<void(const std::string&)>& stage = nullptr,
                    const ProgressFn& progress = nullptr,
                    const std::function<void(const std::string&)>& planned = nullptr,
                    RunWatch* watch = nullptr);
nlohmann::ordered_json ReportJson(const LoadedTrace& trace, const ReportAnswer& answer);

}  // namespace dtr::api
