#include "api/front_door.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "checker/drivers/ratio_grid.h"
#include "checker/engine/heuristic.h"
#include "checker/persist/atlas_checkpoint.h"
#include "checker/persist/grid_checkpoint.h"
#include "checker/proofs/eviction_script.h"
#include "checker/proofs/schedule_checker.h"
#include "diagnose/certificate_records.h"
#include "model/echo.h"
#include "model/error.h"
#include "model/output_file.h"
#include "reports/atlas_report.h"
#include "reports/instability_report.h"
#include "reports/plan_report.h"
#include "reports/report_files.h"
#include "reports/report_json.h"
#include "reports/report_text.h"
#include "reports/run_report.h"
#include "traces/demo.h"

namespace dtr::api {

namespace {

void CheckJobs(int jobs) {
  if (jobs != 0) CheckOption(kJobs, jobs);
}

// "A:B" -> the two halves; throws naming the flag otherwise.
std::pair<std::string, std::string> SplitRange(const std::string& text, const char* flag) {
  size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw Error(fmt::format("{} expects LO:HI, got '{}'", flag, Echo(text)));
  return {text.substr(0, colon), text.substr(colon + 1)};
}

// A byte count: the whole text a non-negative integer that fits in 64 bits.
std::optional<int64_t> ByteCount(const std::string& text) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || used == 0 || v < 0) return std::nullopt;
  return v;
}

int64_t ParseBytes(const std::string& text) {
  std::optional<int64_t> v = ByteCount(text);
  if (!v)
    throw Error(fmt::format("--budgets expects byte counts like 1006117915:1086607348, got '{}'",
                            Echo(text)));
  return *v;
}

// The replay settings, -j and cliff factor of a scan or an ablation.
ScanOptions ScanOptionsOf(const ReplayChoice& settings, int jobs, double cliff_factor) {
  ScanOptions o;
  static_cast<ReplaySettings&>(o) = settings.Resolve();
  o.jobs = jobs;
  o.cliff_factor = cliff_factor;
  return o;
}

// The atlas's range as ratios, checked before the trace is read; none for
// --budgets. "A:B", or any grid sweep and scan take (A:B:STEP, r1,r2,...),
// walked from its lowest to its highest ratio: the atlas covers every budget
// between, so a step changes nothing.
std::optional<std::pair<Ratio, Ratio>> AtlasRatios(const AtlasRequest& r) {
  if (r.ratios.empty()) return std::nullopt;
  if (std::count(r.ratios.begin(), r.ratios.end(), ':') == 1 && r.ratios.find(',') == std::string::npos) {
    auto [a, b] = SplitRange(r.ratios, "--ratios");
    std::pair<Ratio, Ratio> ratios{RatioOption("--ratios", a), RatioOption("--ratios", b)};
    if (ratios.second.value < ratios.first.value)
      throw Error(fmt::format("--ratios {}: the range is empty", Echo(r.ratios)));
    return ratios;
  }
  std::vector<Ratio> grid = GridOption("--ratios", r.ratios);
  auto [lo, hi] = std::minmax_element(grid.begin(), grid.end(),
                                      [](const Ratio& a, const Ratio& b) { return a.value < b.value; });
  return std::pair{*lo, *hi};
}

std::string StoreDir(const std::optional<std::string>& store) { return store ? *store : StoreDirectory(""); }

}  // namespace

nlohmann::ordered_json InfoJson(const LoadedTrace& t) { return TraceInfoJson(t.trace, t.summary); }

void RequireBudget(const BudgetChoice& b, const std::string& command) {
  if (!b.ratio && !b.budget) throw Error(fmt::format("{} needs --ratio R or --budget BYTES", command));
  if (b.budget) CheckOption(kBudget, *b.budget);
}

BudgetChoice ChooseBudget(const std::optional<std::string>& ratio, std::optional<int64_t> bytes,
                          const std::string& command) {
  if (!ratio && !bytes) throw Error(fmt::format("{} needs --ratio R or --budget BYTES", command));
  if (ratio && bytes) throw Error(fmt::format("{} takes --ratio or --budget, not both", command));
  BudgetChoice b;
  if (ratio) b.ratio = RatioOption("--ratio", *ratio);
  if (bytes) {
    CheckOption(kBudget, *bytes);
    b.budget = bytes;
  }
  return b;
}

// replay

void Validate(const ReplayRequest& r) {
  RequireBudget(r.budget, "replay");
  r.settings.Resolve();
}

RunSpec ReplaySpec(const LoadedTrace& t, const ReplayRequest& r) {
  Validate(r);
  RunSpec spec = RunSpecOf(r.settings.Resolve());
  static_cast<BudgetChoice&>(spec) = r.budget;
  // "--override I=TENSOR", sorted by decision index.
  for (const std::string& text : r.overrides) {
    size_t eq = text.find('=');
    int64_t index = -1;
    if (eq != std::string::npos && eq > 0 && eq < 19 && text.find_first_not_of("0123456789") == eq)
      index = std::stoll(text.substr(0, eq));
    if (index < 0)
      throw Error(fmt::format("--override '{}': expected DECISION=TENSOR, e.g. 180=x8205", Echo(text)));
    StorageId storage = t.trace.tensor_named(text.substr(eq + 1)).storage;
    for (const auto& [i, s] : spec.overrides)
      if (i == index) throw Error(fmt::format("--override: decision {} is overridden twice", index));
    spec.overrides.emplace_back(index, storage);
  }
  std::sort(spec.overrides.begin(), spec.overrides.end());
  return spec;
}

RunRecord Replay(const LoadedTrace& t, const ReplayRequest& r) {
  RunSpec spec = ReplaySpec(t, r);
  return RecordOf(spec, t.baseline, dtr::Replay(t.trace, ConfigFor(spec, t.baseline)));
}

nlohmann::ordered_json RunJson(const LoadedTrace& t, const RunRecord& run) {
  return dtr::RunJson(t.summary, run, &t.trace);
}

// sweep

void Validate(const SweepRequest& r) {
  GridOption("--ratios", r.ratios);
  r.settings.Heuristics();
  r.settings.Resolve();
  CheckJobs(r.jobs);
}

std::vector<RunRecord> Sweep(const LoadedTrace& t, const SweepRequest& r,
                             const ProgressFn& progress, RunWatch* watch) {
  Validate(r);
  std::vector<Ratio> ratios = GridOption("--ratios", r.ratios);
  std::vector<RunSpec> specs;
  std::vector<std::string> heuristics;
  for (const std::string& h : r.settings.heuristics) {
    RunSpec base = RunSpecOf(r.settings.Resolve(h));
    heuristics.emplace_back(base.heuristic->name);
    for (const Ratio& ratio : ratios) {
      RunSpec s = base;
      s.ratio = ratio;
      specs.push_back(s);
    }
  }
  std::optional<GridCheckpoint> checkpoint;
  GridJournal journal;
  if (!r.checkpoint.empty()) {
    checkpoint.emplace(r.checkpoint,
                       GridHeader("sweep", GridKeyOf(t.Fingerprint(), r.settings.Resolve(), heuristics, r.ratios)));
    journal = checkpoint->Journal();
  }
  return RunMany(t.trace, t.baseline, specs, r.jobs, progress, checkpoint ? &journal : nullptr, 0,
                 watch);
}

// atlas

void Validate(const AtlasRequest& r) {
  if (r.ratios.empty() == r.budgets.empty()) throw Error("atlas needs --ratios A:B or --budgets LO:HI");
  r.settings.Resolve();
  CheckJobs(r.jobs);
  CheckOption(kMaxRuns, static_cast<int64_t>(std::min<size_t>(r.max_runs, kMaxInt64)));
  CheckOption(kMaxEvals, r.max_evals);
  if (AtlasRatios(r)) return;
  auto [a, b] = SplitRange(r.budgets, "--budgets");
  ParseBytes(a);
  ParseBytes(b);
}

AtlasAnswer Atlas(const LoadedTrace& t, const AtlasRequest& r, const AtlasProgressFn& progress) {
  Validate(r);
  AtlasAnswer answer;
  answer.spec = RunSpecOf(r.settings.Resolve());
  std::pair<int64_t, int64_t> bytes;
  if (std::optional<std::pair<Ratio, Ratio>> ratios = AtlasRatios(r)) {
    bytes = GridBudgetRange({ratios->first, ratios->second}, t.baseline.memory);
  } else {
    auto [a, b] = SplitRange(r.budgets, "--budgets");
    bytes = {ParseBytes(a), ParseBytes(b)};
  }
  if (bytes.second < bytes.first || bytes.first < 0)  // before a checkpoint file is made
    throw Error(fmt::format("an atlas needs 0 <= lo <= hi, got budgets [{}, {}]", bytes.first, bytes.second));
  std::optional<AtlasCheckpoint> checkpoint;
  AtlasJournal journal;
  if (!r.checkpoint.empty()) {
    checkpoint.emplace(r.checkpoint, WalkKeyOf(t.Fingerprint(), answer.spec, bytes.first, bytes.second),
                       t.baseline);
    journal = checkpoint->Journal();
  }
  answer.atlas = WalkedPart(BuildAtlas(
      t.trace, t.baseline, answer.spec, bytes.first, bytes.second, r.jobs, progress,
      AtlasCap{.runs = r.max_runs, .evals = r.max_evals}, checkpoint ? &journal : nullptr));
  return answer;
}

nlohmann::ordered_json AtlasJson(const LoadedTrace& t, const AtlasAnswer& a) {
  return dtr::AtlasJson(t.summary, a.spec, a.atlas);
}

// scan

void Validate(const ScanRequest& r) {
  GridOption("--ratios", r.ratios);
  r.settings.Resolve();
  CheckJobs(r.jobs);
  CheckOption(kCliffFactor, r.cliff_factor);
  CheckOption(kMaxWalk, r.max_walk);
  if (r.refine && r.exact) throw Error("scan takes --refine or --exact, not both");
}

ScanResult Scan(const LoadedTrace& t, const ScanRequest& r, const ProgressFn& progress,
                RunWatch* watch) {
  Validate(r);
  ScanOptions o = ScanOptionsOf(r.settings, r.jobs, r.cliff_factor);
  o.watch = watch;
  o.refine = r.refine;
  o.exact = r.exact;
  o.max_walk = r.max_walk;
  std::vector<Ratio> ratios = GridOption("--ratios", r.ratios);
  // The grid's replays, or the exact scan's atlas walk, go to the checkpoint.
  std::optional<GridCheckpoint> grid_checkpoint;
  std::optional<AtlasCheckpoint> atlas_checkpoint;
  GridJournal grid_journal;
  AtlasJournal atlas_journal;
  if (!r.checkpoint.empty()) {
    nlohmann::ordered_json header =
        GridHeader("scan", GridKeyOf(t.Fingerprint(), o, {std::string(o.heuristic->name)}, r.ratios));
    header["exact"] = r.exact;
    if (r.exact) {
      auto [lo, hi] = GridBudgetRange(ratios, t.baseline.memory);
      header["budget_lo"] = lo;
      header["budget_hi"] = hi;
      atlas_checkpoint.emplace(r.checkpoint, header, t.baseline, lo, hi);
      atlas_journal = atlas_checkpoint->Journal();
      o.atlas_journal = &atlas_journal;
    } else {
      grid_checkpoint.emplace(r.checkpoint, header);
      grid_journal = grid_checkpoint->Journal();
      o.grid_journal = &grid_journal;
    }
  }
  return ScanInstability(t.trace, t.baseline, ratios, o, progress);
}

nlohmann::ordered_json ScanJson(const LoadedTrace& t, const ScanResult& scan) {
  return dtr::ScanJson(t.summary, scan);
}

// explain, prove

void Validate(const ProofRequest& r) {
  const char* command = r.kind == ProofKind::kExplain ? "explain" : "prove";
  RequireBudget(r.budget, command);
  ReplaySettings s = r.settings.Resolve();
  RequireRuntimeV2(s.runtime, command);
  for (const std::string& h : r.witness_heuristics) FindHeuristic(h);
  CheckOption(kTimeout, r.timeout);
  CheckOption(kWorkLimit, r.work_limit);
  CheckOption(kWindows, r.windows);
  CheckOption(kWindowOps, r.window_ops);
  CheckOption(kRollingOps, r.rolling);
  CheckOption(kPlanSeconds, r.plan_seconds);
  if (r.next_use_computations)  // 0: sized to the trace
    CheckOption(kNextUseComputations, r.next_use_computations);
}

namespace {

// The header every proof command prints: the trace, its baseline, the
// runtime and, when there is one, the budget as it was chosen.
ProofHeader HeaderFor(const LoadedTrace& t, RuntimeKind runtime, const BudgetChoice* budget) {
  ProofHeader h;
  h.log = t.summary.log;
  h.baseline = t.baseline;
  h.runtime = runtime;
  if (budget) {
    h.ratio = budget->budget ? std::nullopt : budget->ratio;
    h.budget = budget->Bytes(t.baseline.memory);
  }
  return h;
}

// The heuristic's run that explain and frontier look at, without an overhead
// limit: a run that thrashes goes on to its OOM.
ReplayConfig HeuristicRun(const LoadedTrace& t, const ReplayChoice& settings, const BudgetChoice& budget,
                          ReplayObserver* watcher) {
  RunSpec spec = RunSpecOf(settings.Resolve());
  spec.overhead_limit.reset();
  static_cast<BudgetChoice&>(spec) = budget;
  ReplayConfig config = ConfigFor(spec, t.baseline);
  config.watcher = watcher;
  return config;
}

}  // namespace

ProofAnswer Prove(const LoadedTrace& t, const ProofRequest& r, ReplayObserver* watcher,
                  const ClassifyProgress& progress) {
  Validate(r);
  const ReplaySettings settings = r.settings.Resolve();
  ProofAnswer a;
  a.kind = r.kind == ProofKind::kExplain ? "explain" : "prove";
  a.header = HeaderFor(t, settings.runtime, &r.budget);
  ClassifyOptions o = ClassifyOptionsFor({.z3 = r.z3,
                                          .timeout_seconds = r.timeout,
                                          .work_limit = r.work_limit,
                                          .windows = r.windows,
                                          .window_ops = r.window_ops,
                                          .cut = r.cut});
  o.witness.runtime = settings.runtime;
  o.witness.rolling_ops = r.rolling;
  o.witness.plan_seconds = r.plan_seconds;
  o.witness.next_use_computations = r.next_use_computations;
  for (const std::string& h : r.witness_heuristics) o.witness.heuristics.push_back(&FindHeuristic(h));
  // The stored certificates are used, and what this run finds is added.
  a.store = OpenStore(StoreDir(r.store), t.path, t.trace, t.baseline.memory);
  if (a.store) o.stored = a.store->Find(settings.runtime);
  if (r.kind == ProofKind::kExplain) {
    a.header.heuristic = r.settings.heuristic();
    // `watcher` sees the run, then its frontier.
    a.classification =
        ExplainOom(t.trace, t.baseline, HeuristicRun(t, r.settings, r.budget, watcher), o, progress);
  } else {
    a.classification = ProveBudget(t.trace, t.baseline, a.header.budget, o, progress);
  }
  if (!r.save_script.empty()) {
    const Classification& c = a.classification;
    if (!c.witness_search.witness) throw Error("no verified script to save (the verdict has none)");
    const Witness& w = *c.witness_search.witness;
    SaveEvictionScript(r.save_script, t.trace, w.script,
                       {fmt::format("dtrcheck eviction script for {}", a.header.log),
                        fmt::format("passes the schedule checker at budget {} ({})", w.check.budget,
                                    RuntimeName(a.header.runtime)),
                        fmt::format("source: {}: {}", w.source, w.description)});
  }
  if (a.store) a.store_changes = RecordClassification(*a.store, t.trace, settings.runtime, a.classification, a.kind);
  return a;
}

nlohmann::ordered_json ProofJson(const LoadedTrace& t, const ProofAnswer& a) {
  return ClassificationJson(t.trace, a.header, a.kind, a.classification);
}

bool SaveProofStore(ProofAnswer& a) {
  if (!a.store || a.store_changes.empty()) return false;
  return a.store->Save();
}

// diff

namespace {

// --budgets A,B: two byte counts.
std::vector<int64_t> ParseBudgetPair(const std::string& text) {
  std::vector<int64_t> budgets;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::optional<int64_t> v = ByteCount(std::string(rest.substr(0, comma)));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (!v)
      throw Error(fmt::format("--budgets: expected two byte counts A,B, got '{}'", Echo(text)));
    budgets.push_back(*v);
  }
  if (budgets.size() != 2)
    throw Error(fmt::format("diff needs exactly two budgets, got {}", budgets.size()));
  return budgets;
}

// The two budgets of a diff.
std::array<BudgetChoice, 2> DiffBudgets(const DiffRequest& r) {
  if (!r.budgets.empty() && !r.ratios.empty())
    throw Error("diff takes --ratios or --budgets, not both");
  if (!r.budgets.empty()) {
    std::vector<int64_t> b = ParseBudgetPair(r.budgets);
    return {BudgetChoice{.ratio = std::nullopt, .budget = b[0]},
            BudgetChoice{.ratio = std::nullopt, .budget = b[1]}};
  }
  if (r.ratios.empty()) throw Error("diff needs --ratios A,B or --budgets A,B");
  std::vector<Ratio> ratios = ParseRatios(r.ratios);
  if (ratios.size() != 2)
    throw Error(fmt::format("diff needs exactly two ratios, got {}", ratios.size()));
  return {BudgetChoice{.ratio = ratios[0], .budget = std::nullopt},
          BudgetChoice{.ratio = ratios[1], .budget = std::nullopt}};
}

}  // namespace

void Validate(const DiffRequest& r) {
  DiffBudgets(r);
  r.settings.Resolve();
}

RunComparison Diff(const LoadedTrace& t, const DiffRequest& r,
                   std::array<ReplayObserver*, 2> watchers) {
  Validate(r);
  std::array<BudgetChoice, 2> budgets = DiffBudgets(r);
  RunSpec a = RunSpecOf(r.settings.Resolve());
  RunSpec b = a;
  static_cast<BudgetChoice&>(a) = budgets[0];
  static_cast<BudgetChoice&>(b) = budgets[1];
  return CompareRuns(t.trace, t.baseline, a, b, watchers);
}

// blame

void Validate(const BlameRequest& r) {
  if (r.ratio.empty()) throw Error("blame needs --ratio R");
  ParseRatio(r.ratio);
  if (!r.against.empty()) ParseRatio(r.against);
  r.settings.Resolve();
  CheckJobs(r.options.jobs);
  CheckOption(kMaxEvals, r.options.max_evals);
}

BlameResult Blame(const LoadedTrace& t, const BlameRequest& r, const ProgressFn& progress) {
  Validate(r);
  RunSpec run = RunSpecOf(r.settings.Resolve());
  run.ratio = ParseRatio(r.ratio);
  std::optional<RunSpec> against;
  if (!r.against.empty()) {
    against = run;
    against->ratio = ParseRatio(r.against);
  }
  return dtr::Blame(t.trace, t.baseline, run, against, r.options, progress);
}

// ablate

void Validate(const AblateRequest& r) {
  ParseRatios(r.ratios);
  r.settings.Resolve();
  CheckJobs(r.jobs);
  CheckOption(kCliffFactor, r.cliff_factor);
  CheckOption(kMaxEvals, r.max_evals);
}

AblationResult Ablate(const LoadedTrace& t, const AblateRequest& r, const ProgressFn& progress,
                      RunWatch* watch) {
  Validate(r);
  ScanOptions o = ScanOptionsOf(r.settings, r.jobs, r.cliff_factor);
  o.watch = watch;
  return dtr::Ablate(t.trace, t.baseline, ParseRatios(r.ratios), o, r.max_evals, progress);
}

// frontier

void Validate(const FrontierRequest& r) {
  RequireBudget(r.budget, "frontier");
  RequireRuntimeV2(r.settings.Resolve().runtime, "frontier");
  if (r.at != -1) CheckOption(kDecision, r.at);
}

FrontierAnswer Frontier(const LoadedTrace& t, const FrontierRequest& r, ReplayObserver* watcher) {
  Validate(r);
  const ReplaySettings settings = r.settings.Resolve();
  FrontierAnswer a;
  a.header = HeaderFor(t, settings.runtime, &r.budget);
  a.header.heuristic = r.settings.heuristic();
  const ReplayConfig config = HeuristicRun(t, r.settings, r.budget, watcher);
  a.frontier =
      r.at >= 0 ? FrontierAtDecision(t.trace, config, r.at) : FrontierAtOom(t.trace, config);
  return a;
}

nlohmann::ordered_json FrontierJson(const LoadedTrace& t, const FrontierAnswer& a) {
  return dtr::FrontierJson(t.trace, a.header, a.frontier);
}

// check

void Validate(const CheckRequest& r) {
  RequireBudget(r.budget, "check");
  RequireRuntimeV2(ParseRuntime(r.runtime), "check");
  if (r.script.empty()) throw Error("check needs --script FILE");
}

CheckAnswer Check(const LoadedTrace& t, const CheckRequest& r) {
  Validate(r);
  CheckAnswer a;
  a.header = HeaderFor(t, ParseRuntime(r.runtime), &r.budget);
  EvictionScript script = LoadEvictionScript(r.script, t.trace);
  a.entries = script.entries.size();
  a.check = CheckSchedule(t.trace, a.header.budget, script, a.header.runtime);
  return a;
}

nlohmann::ordered_json CheckJson(const LoadedTrace& t, const CheckRequest& r,
                                 const CheckAnswer& a) {
  return ScheduleCheckJson(t.trace, a.header, r.script, a.entries, a.check);
}

// bounds

namespace {

// The options ComputeBounds takes: the request's, with the settings named
// by text resolved.
BoundsOptions BoundsOptionsOf(const BoundsRequest& r) {
  BoundsOptions o = r.options;
  o.heuristics = r.settings.Heuristics();
  o.runtime = ParseRuntime(r.settings.runtime);
  o.overhead_limit = r.settings.overhead_limit;
  o.walk = ParseWalkMode(r.walk);
  return o;
}

}  // namespace

void Validate(const BoundsRequest& r) {
  const BoundsOptions o = BoundsOptionsOf(r);
  r.settings.Resolve();
  RequireRuntimeV2(o.runtime, "bounds");
  ParseRatios(o.grid);  // bad grids fail before any work
  if (!o.fine_step.empty()) ParseRatio(o.fine_step);
  CheckJobs(o.jobs);
  CheckOption(kWindows, o.windows);
  CheckOption(kWindowOps, o.window_ops);
  CheckOption(kTimeout, o.limits.timeout_seconds);
  CheckOption(kWorkLimit, o.limits.work_limit);
  CheckOption(kWalkSearches, o.walk_searches);
  CheckOption(kMaxEvals, o.run_max_evals);
  CheckOption(kPlanWork, o.plan_work);
  // No time limit is the default for these three: infinity passes.
  if (!std::isinf(o.search_seconds)) CheckOption(kSearchSeconds, o.search_seconds);
  if (!std::isinf(o.plan_seconds)) CheckOption(kPlanSeconds, o.plan_seconds);
  if (!std::isinf(o.cut_seconds)) CheckOption(kCutSeconds, o.cut_seconds);
  if (o.plan_max_overhead) CheckOption(kPlanMaxOverhead, *o.plan_max_overhead);
  if (o.plans_only && o.plan_seconds == 0) throw Error("--plans-only needs --plan-seconds above 0");
}

BoundsAnswer Bounds(const LoadedTrace& t, const BoundsRequest& r, const BoundsProgress& stage,
                    const BoundsStatus& status, RunWatch* watch) {
  Validate(r);
  BoundsOptions o = BoundsOptionsOf(r);
  o.watch = watch;
  BoundsAnswer a;
  a.header = HeaderFor(t, o.runtime, nullptr);
  a.store = OpenStore(StoreDir(r.store), t.path, t.trace, t.baseline.memory);
  a.report = ComputeBounds(t.trace, t.baseline, o, stage, status);
  if (!r.save_script.empty()) {
    if (!a.report.best)
      throw Error("no verified schedule to save (no run passed and no plan completed)");
    const VerifiedSchedule& best = *a.report.best;
    SaveEvictionScript(r.save_script, t.trace, best.script,
                       {fmt::format("dtrcheck eviction script for {}", a.header.log),
                        fmt::format("passes the schedule checker at budget {} ({})", best.budget,
                                    RuntimeName(a.header.runtime)),
                        fmt::format("source: {}: {}", best.source, best.description)});
  }
  if (a.store) a.store_changes = RecordBounds(*a.store, t.trace, o.runtime, a.report, o.limits);
  return a;
}

nlohmann::ordered_json BoundsJson(const LoadedTrace& t, const BoundsAnswer& a) {
  return dtr::BoundsJson(a.header, a.report, &t.trace);
}

// plan

void Validate(const PlanRequest& r) {
  RequireBudget(r.budget, "plan");
}

CheckpointPlan Plan(const LoadedTrace& t, const PlanRequest& r) {
  Validate(r);
  CheckpointPlan plan = PlanCheckpoints(t.trace, r.budget.Bytes(t.baseline.memory));
  if (!r.save_script.empty()) {
    std::vector<std::string> comment = {"dtrcheck plan: the evictions of checkpointing"};
    for (const PlannedModule& m : plan.modules) comment.push_back("  " + m.module);
    SaveEvictionScript(r.save_script, t.trace, plan.script, comment);
  }
  return plan;
}

nlohmann::ordered_json PlanJson(const LoadedTrace& t, const CheckpointPlan& plan) {
  return dtr::PlanJson(t.trace, plan);
}

// report

void Validate(const ReportRequest& r) {
  if (!r.ratios.empty()) GridOption("--ratios", r.ratios);
  r.settings.Heuristics();
  r.settings.Resolve();
  if (!r.timeline_ratio.empty()) RatioOption("--timeline-ratio", r.timeline_ratio);
  CheckOption(kCliffFactor, r.cliff_factor);
  CheckJobs(r.jobs);
  if (r.atlas_max_runs)
    CheckOption(kAtlasMaxRuns,
                static_cast<int64_t>(std::min<size_t>(*r.atlas_max_runs, kMaxInt64)));
  if (r.atlas_max_evals) CheckOption(kAtlasMaxEvals, *r.atlas_max_evals);
  if (r.max_verdicts)  // 0: sized to the trace
    CheckOption(kMaxVerdicts, static_cast<int64_t>(std::min<size_t>(r.max_verdicts, kMaxInt64)));
  // Z3's limits need z3, as the CLI's --timeout, --work-limit, --windows and
  // --window-ops need --z3.
  std::vector<std::string> given;
  for (const auto& [flag, set] : {std::pair{"--timeout", r.timeout.has_value()},
                                  {"--work-limit", r.work_limit.has_value()},
                                  {"--windows", r.windows.has_value()},
                                  {"--window-ops", r.window_ops.has_value()}})
    if (set) given.emplace_back(flag);
  if (!given.empty() && !r.z3)
    throw Error(fmt::format("report: {} set Z3's limits and need --z3", fmt::join(given, ", ")));
  if (r.timeout) CheckOption(kTimeout, *r.timeout);
  if (r.work_limit) CheckOption(kWorkLimit, *r.work_limit);
  if (r.windows) CheckOption(kWindows, *r.windows);
  if (r.window_ops) CheckOption(kWindowOps, *r.window_ops);
  if (r.out.empty()) throw Error("report needs an output directory (--out DIR)");
}

ReportAnswer Report(const LoadedTrace& t, const ReportRequest& r,
                    const std::function<void(const std::string&)>& stage,
                    const ProgressFn& progress,
                    const std::function<void(const std::string&)>& planned, RunWatch* watch) {
  Validate(r);
  ReportOptions o;
  o.watch = watch;
  static_cast<ReplaySettings&>(o) = r.settings.Resolve();
  o.heuristics = r.settings.Heuristics();
  o.cliff_factor = r.cliff_factor;
  o.jobs = r.jobs;
  o.atlas = r.atlas;
  if (r.atlas_max_runs) o.atlas_cap.runs = *r.atlas_max_runs;
  if (r.atlas_max_evals) o.atlas_cap.evals = *r.atlas_max_evals;
  o.refine = r.refine;
  o.verdicts = r.proofs;
  o.divergence = r.divergence;
  o.verdict_options.z3 = r.z3;
  o.verdict_options.cut = r.cut;
  if (r.timeout) o.verdict_options.timeout_seconds = *r.timeout;
  if (r.work_limit) o.verdict_options.work_limit = *r.work_limit;
  if (r.windows) o.verdict_options.windows = *r.windows;
  if (r.window_ops) o.verdict_options.window_ops = *r.window_ops;
  o.stage = stage;
  o.progress = progress;
  // The demo trace is written beside the report, so that the report's
  // `dtrcheck explain` / `diff` commands have a file to read.
  std::vector<std::pair<std::string, std::string>> extra;
  std::unique_ptr<CertificateStore> store;
  if (t.path.empty()) {
    o.trace_name = kDemoTraceName;
    o.trace_source = kDemoSource;
    extra.push_back({"demo.log", GenerateDemo()});
    o.command_trace = (std::filesystem::path(r.out) / "demo.log").string();
    o.ratios_text = r.ratios.empty() ? DemoRatios() : r.ratios;
  } else {
    o.trace_name = std::filesystem::path(t.path).filename().string();
    o.trace_source = t.path;
    o.ratios_text = r.ratios.empty() ? DefaultReportRatios(t.trace) : r.ratios;
    // Read only; report.json's explain commands name the directory.
    const std::string dir = StoreDir(r.store);
    store = OpenStore(dir, t.path, t.trace, t.baseline.memory);
    if (store) {
      o.stored = store->Find(o.runtime);
      o.store_path = dir;
    }
  }
  o.ratios = GridOption("--ratios", o.ratios_text);
  if (!r.figures.empty()) CheckFiguresDir(r.out, r.figures);
  if (!r.timeline_ratio.empty()) o.timeline_ratio = RatioOption("--timeline-ratio", r.timeline_ratio);
  // What would fail at once fails before the plan is announced.
  CheckTimelineRatio(o);
  CheckDirectoryTarget(r.out);
  const ReportCaps caps = DefaultReportCaps(t.trace);
  o.max_verdicts = r.max_verdicts ? r.max_verdicts : caps.verdicts;
  o.verdict_evals = r.max_verdicts ? 0 : kDefaultVerdictEvals;  // --max-verdicts: that count alone
  ReportAnswer a;
  a.plan = ReportPlan(o, caps);
  if (planned) planned(a.plan);
  a.report = BuildBudgetReport(t.trace, o);
  a.files = WriteReportFiles(t.trace, a.report, r.out, r.figures, extra);
  return a;
}

nlohmann::ordered_json ReportJson(const LoadedTrace& t, const ReportAnswer& a) {
  return dtr::ReportJson(t.trace, a.report);
}

}  // namespace dtr::api
