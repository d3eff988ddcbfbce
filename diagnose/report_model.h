// The report of one trace under one (heuristic, runtime) over a ratio grid:
// every section a renderer shows (reports/report_json.h, markdown_report.h,
// html_report.h), as plain data assembled from replays and the analyses of
// this folder. Nothing here is text to be parsed; renderers name tensors and
// operators from the trace. A BudgetReport holds one per heuristic.
//
// How it is built (BuildReport), in stages:
//  1. "grid": the user's grid is replayed;
//  2. "atlas": the exact budget atlas over the grid's range, walked within a
//     budget of replays, most telling windows first (diagnose/atlas_coverage.h);
//  3. "refine": budgets chosen from what the atlas found are replayed and
//     added as rows: zoom grids over inversions the grid stepped over, edge
//     bytes of narrow holes and of cliffs (diagnose/grid_refinement.h). Each
//     row says where it comes from (BudgetRow::source);
//  4. the shape of the budget curve over all rows (regimes, cliffs,
//     feasibility inversions as diagnose/budget_curve.h defines them, i.e.
//     what `dtrcheck scan` reports for the same rows and cliff factor), with
//     every boundary that lies in a walked section read off the atlas;
//  5. the memory timelines (diagnose/memory_timeline.h): around the first
//     feasibility inversion, the last passing and the first failing run; and
//     the memory of one of them stacked by storage and module
//     (diagnose/memory_stack.h);
//  6. "frontiers": the pinned frontier (diagnose/remat_frontier.h, as
//     `dtrcheck frontier` computes it) of every distinct OOM state;
//  7. "verdicts": explain's classification of every OOM row, with its
//     certificate (diagnose/oom_classification.h, diagnose/certificate.h);
//  8. "divergence": `dtrcheck diff` of neighbouring rows in different
//     regimes (diagnose/divergence.h);
//  9. the headline, from all of the above (diagnose/budget_headline.h).
// Stages 2, 3, 7 and 8 can be turned off; an absent section is rendered as
// "not computed", with the reason, never hidden.
//
// Everything is deterministic: the atlas's budget counts replays, never
// seconds, so the same options give the same report on any machine and for
// any number of jobs.
//
// Row indices (`run`, `first_run`, ...) index ReportModel::rows, which is in
// increasing budget order (ties keep the grid's order).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/drivers/budget_atlas.h"
#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "checker/engine/replay.h"
#include "diagnose/atlas_coverage.h"
#include "diagnose/budget_curve.h"
#include "diagnose/budget_headline.h"
#include "diagnose/divergence.h"
#include "diagnose/grid_refinement.h"
#include "diagnose/instability_scan.h"
#include "diagnose/memory_stack.h"
#include "diagnose/memory_timeline.h"
#include "diagnose/oom_classification.h"
#include "diagnose/remat_frontier.h"
#include "model/trace.h"

namespace dtr {

// The options of the verdicts, as `dtrcheck explain` takes them. Without Z3
// (the default) a verdict costs a few replays; with it a budget can take tens
// of seconds. Either way the answer does not depend on the clock unless a
// time limit is given.
struct VerdictOptions {
  bool z3 = false;                            // explain without --no-z3
  double timeout_seconds = 0;                 // explain --timeout (0: none)
  uint32_t work_limit = kDefaultZ3WorkLimit;  // explain --work-limit (0: none)
  int32_t windows = 6;          // explain --windows
  int32_t window_ops = 6;       // explain --window-ops
  bool cut = true;              // explain without --no-cut
};
// What ExplainOom and ProveBudget are given for these options (explain and
// prove start from it too; the witness runtime and sources are theirs to set).
ClassifyOptions ClassifyOptionsFor(const VerdictOptions& options);
// The explain flags that ask for the same, each with a leading space
// (" --no-z3"); empty for explain's defaults.
std::string ExplainFlagsFor(const VerdictOptions& options);

// The default grid of a trace's report: from the proven static floor
// (checker/proofs/memory_bound.h) rounded up to a hundredth, so that it starts where
// a budget can first pass (a grid from a fixed 0.1 misses DTR's threshold on
// ResNet-32, at 0.0974), up to 1, in steps of 0.01, 0.02 or 0.05: the finest
// whose rows cost about 2.5e9 storages x steps at most (ReportCaps).
std::string DefaultReportRatios(const Trace& trace);

// The atlas's default cap: 1,000 replays (about 20 s of one core on
// ResNet-32, whose first 1,000 intervals above ratio 0.10 reach past 0.12)
// or 200 million heuristic evaluations (about 10 s of two cores here), the
// first reached: an atlas replay near a regime change can cost a hundred
// times a grid run, so the replays alone do not bound the time.
inline constexpr AtlasCap kDefaultReportAtlasCap{.runs = 1000, .evals = 200'000'000};

// The default caps of a report, sized to the trace so that the report
// finishes in about two minutes on two cores on each public trace
// (docs/default_times.md has the measured times). They are counts, never
// seconds, so the report is the same on every machine:
//  - the verdicts and the grid's step: a replay costs about storages x
//    program steps (each eviction scans the pool);
//  - the atlas: kDefaultReportAtlasCap, whose evaluations measure the
//    replays' real cost.
// The report's default cap on its verdicts' cost: a verdict makes about 40
// replays (lower budgets, counterfactuals) at about the cost of its OOM run,
// so verdicts are taken, in VerdictRows' order, while their VerdictCost adds
// up to at most this (the first always). A count:
// Inception-v4's OOM runs make about 57 million evaluations each, so it gets
// one verdict, where a count of storages x steps gave it four (about 80 s of
// two cores here).
inline constexpr int64_t kDefaultVerdictEvals = 2'000'000'000;
inline constexpr int64_t kReplaysPerVerdict = 40;

struct ReportCaps {
  size_t verdicts = 0;      // OOM budgets classified (0: every one)
  int64_t replay_cost = 0;  // storages x program steps
};
ReportCaps DefaultReportCaps(const Trace& trace);

struct ReportOptions : ReplaySettings {
  std::string trace_name;    // shown as the trace's name
  std::string trace_source;  // where it came from: a path, or how it was generated
  // The trace argument of the `dtrcheck explain` / `diff` commands the report
  // prints to redo a verdict or a divergence by hand (default: trace_source).
  std::string command_trace;
  // BuildReport reports on the settings' heuristic; BuildBudgetReport on each
  // of `heuristics` (or on the settings' alone when the list is empty).
  std::vector<const HeuristicSpec*> heuristics;
  std::string ratios_text;  // the grid as the user wrote it
  std::vector<Ratio> ratios;
  // The one run whose memory timeline is drawn, instead of the default pair
  // (see ReportModel::timelines). Must be one of `ratios`.
  std::optional<Ratio> timeline_ratio;
  // The factor of the regime and cliff rules (diagnose/budget_curve.h):
  // neighbouring feasible budgets whose overheads differ by more than it are
  // a cliff.
  double cliff_factor = kDefaultCliffFactor;
  // At most this many points in the timeline; longer runs are reduced to the
  // lowest and highest memory of each of max_timeline_points / 2 event buckets.
  int max_timeline_points = 3000;
  int jobs = 0;         // sweep threads (0: one per core)
  ProgressFn progress;  // called as runs finish (done, total), per stage
  RunWatch* watch = nullptr;  // sees the replays of the grid and refine stages as they go
  // Called when a stage starts: "grid", "atlas", "refine", "frontiers",
  // "verdicts", "divergence" (prefixed with "HEURISTIC: " by
  // BuildBudgetReport when there are several).
  std::function<void(const std::string&)> stage;

  // The exact atlas over [lowest, highest grid budget], walked within
  // atlas_cap (diagnose/atlas_coverage.h).
  bool atlas = true;
  AtlasCap atlas_cap = kDefaultReportAtlasCap;
  // Rows added from what the atlas found (diagnose/grid_refinement.h).
  bool refine = true;
  RefineLimits refine_limits;
  // Verdicts: explain's classification of OOM rows, at most max_verdicts of
  // them (0: every one): first the highest row of each stretch of OOM rows,
  // then the others from the highest budget down.
  bool verdicts = true;
  size_t max_verdicts = 0;
  int64_t verdict_evals = 0;  // kDefaultVerdictEvals's rule with this total (0: none)
  VerdictOptions verdict_options;
  // Certificates stored for the trace and runtime (diagnose/certificate_store.h),
  // or null; store_path is the --store argument shown in the explain commands.
  const RuntimeCertificates* stored = nullptr;
  std::string store_path;
  // Divergence between neighbouring rows in different regimes.
  bool divergence = true;
};

struct TraceFacts {
  std::string name, source;
  int64_t operators = 0, constants = 0, tensors = 0, aliases = 0, storages = 0, program_steps = 0;
  Baseline baseline;
};

struct BudgetRow {
  RunRecord run;
  RowSource source = RowSource::kGrid;
  std::string source_reason;  // for an added row: why (GridAddition::reason)
  // Copies of what CurveShape says about this row: its regime (index into
  // CurveShape::analysis.regimes) and, for an OOM row inside a feasibility
  // inversion, that inversion (index into CurveShape::analysis.inversions).
  int regime = -1;
  std::optional<size_t> inversion;
};

// A feasibility inversion of the atlas: ExactInversion's interval indices
// index sections[section].intervals of the report's AtlasCoverage.
struct AtlasInversion {
  size_t section = 0;
  ExactInversion where;
};

// The budget curve over the rows, as `dtrcheck scan` analyzes the same grid
// (and, with a complete atlas, as `scan --exact` does).
struct CurveShape {
  std::vector<ScanPoint> points;  // one per row, same order, regime filled in
  // Regimes, cliffs and inversions; with a complete atlas every cliff
  // boundary and inversion edge is read off it, else only those whose runs
  // touch are known.
  ScanAnalysis analysis;
  std::vector<OomStretch> oom_stretches;  // every maximal stretch of OOM rows
  // With an atlas: the feasibility inversions inside its walked sections,
  // located to the byte, each linked to the grid inversion whose OOM rows lie
  // in it, if any.
  std::optional<std::vector<AtlasInversion>> exact_inversions;
};

// One failure state: rows whose OOM context (frames included) is the same
// share one frontier, even if their runs differ before the failure.
struct OomFrontier {
  std::vector<size_t> runs;  // the rows, in budget order
  // Their distinct exact budget intervals ([budget_lo, budget_hi]), in order.
  std::vector<std::pair<int64_t, int64_t>> budget_intervals;
  // FrontierAtOom of the first row's run: what `dtrcheck frontier` shows.
  RematFrontier frontier;
};

// Explain's classification of one OOM row's budget: its verdict and
// certificate are Classification::verdict and ::certificate.
struct BudgetVerdict {
  size_t run = 0;
  Classification classification;  // what `dtrcheck explain` computes
  std::string command;            // the `dtrcheck explain` command that redoes it
};

// Where a pair of neighbouring rows in different regimes lies on the curve.
enum class RegimeEdge {
  kRegimeChange,        // anywhere else
  kInversionLowerEdge,  // the pass right below an inversion and its first OOM
  kInversionUpperEdge,  // an inversion's last OOM and the pass right above it
};
// "regime change", "last pass / first OOM", "last OOM / first pass"
std::string_view RegimeEdgeName(RegimeEdge e);

// `dtrcheck diff` of two neighbouring rows in different regimes.
struct RegimeDivergence {
  size_t run_a = 0, run_b = 0;  // run_a has the lower budget
  RegimeEdge edge = RegimeEdge::kRegimeChange;
  RunComparison comparison;
  std::string command;  // the `dtrcheck diff` command
};

// What a verdict at `row` is counted to cost against ReportOptions::verdict_evals:
// kReplaysPerVerdict replays of (heuristic evaluations + program steps) each.
int64_t VerdictCost(const ReportModel& m, const BudgetRow& row);

struct ReportModel {
  TraceFacts trace;
  // The answer first: smallest passing budget, failing bands and their
  // verdicts, proven floor, worst cliff (diagnose/budget_headline.h), from
  // everything below.
  BudgetHeadline headline;
  std::string heuristic, runtime, ratios_text;
  std::optional<double> overhead_limit;
  double cliff_factor = kDefaultCliffFactor;
  std::vector<BudgetRow> rows;
  CurveShape curve;
  // The runs whose memory is drawn, overlaid on one figure: around the first
  // feasibility inversion, its last passing run below and its first OOM run;
  // else around the smallest passing row with an OOM right below it, that
  // pass and that OOM; else the first OOM row, else the lowest row; or the
  // run of --timeline-ratio alone. Never empty.
  std::vector<MemoryTimeline> timelines;
  std::string timeline_selection;  // why these runs, in words
  // The memory of one timeline run stacked by storage (and by module): the
  // passing one when there is one, else the first.
  MemoryStack memory_stack;
  // The decision where the two timelines' runs part ways (first divergence),
  // when there are two and `divergence` compared them.
  std::optional<FirstDivergence> timeline_divergence;
  std::optional<std::vector<OomFrontier>> frontiers;
  std::optional<AtlasCoverage> atlas;
  std::optional<std::vector<BudgetVerdict>> verdicts;
  size_t verdicts_capped = 0;  // OOM rows left without a verdict by the caps
  size_t max_verdicts = 0;
  int64_t verdict_evals = 0;
  std::optional<std::vector<RegimeDivergence>> divergence;
  // Why an optional section is absent (turned off, or not applicable); shown
  // in its place. Empty when the section is there.
  std::string frontiers_skipped, atlas_skipped, verdicts_skipped, divergence_skipped;
  // The options the verdicts were computed with, as explain flags ("" for
  // explain's defaults).
  std::string explain_flags;
};

// The stages above for options.heuristic, in parallel where they can be.
// Throws Error for an empty grid or a timeline ratio not on it.
ReportModel BuildReport(const Trace& trace, const ReportOptions& options);
// Throws Error when options.timeline_ratio is set and not on the grid.
void CheckTimelineRatio(const ReportOptions& options);

// The report of one trace for several heuristics: one ReportModel each, in
// the order given, built alike.
struct BudgetReport {
  std::vector<ReportModel> heuristics;
};
BudgetReport BuildBudgetReport(const Trace& trace, const ReportOptions& options);

// The curve's shape from rows alone (sorted by budget): AnalyzeScan over
// their points, the OOM stretches, and each row's regime and inversion.
CurveShape AnalyzeCurve(std::vector<BudgetRow>& rows, double cliff_factor);

}  // namespace dtr
