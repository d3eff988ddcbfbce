// The report of one trace under one (heuristic, runtime) over a ratio grid:
// every section a renderer shows (reports/report_json.h, markdown_report.h,
// html_report.h), as plain data assembled from replays and the analyses of
// this folder. Nothing here is text to be parsed; renderers name tensors and
// operators from the trace.
//
// Always filled, from replays: the trace summary, one row per budget, the
// shape of the budget curve (regimes, cliffs, feasibility inversions as
// diagnose/budget_curve.h defines them, i.e. what `dtrcheck scan` reports for
// the same grid and cliff factor), the memory timeline of one selected run and
// the pinned frontier (diagnose/remat_frontier.h, as `dtrcheck frontier`
// computes it) of every distinct OOM state.
// Optional (each can be turned off; an absent one is rendered as "not
// computed", never hidden):
//  - the exact budget atlas over the grid's budget range (`dtrcheck atlas`),
//    skipped with a note when it needs more than a cap of replays;
//  - one verdict per OOM row: the classification `dtrcheck explain` makes at
//    that budget, with its certificate (diagnose/oom_classification.h,
//    diagnose/certificate.h);
//  - the divergence between neighbouring rows in different regimes: what
//    `dtrcheck diff` prints for the pair (diagnose/divergence.h).
//
// Row indices (`run`, `first_run`, ...) index ReportModel::rows, which is in
// increasing budget order (ties keep the grid's order).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/budget_atlas.h"
#include "checker/ratio_grid.h"
#include "checker/replay.h"
#include "checker/sweep.h"
#include "diagnose/budget_curve.h"
#include "diagnose/divergence.h"
#include "diagnose/instability_scan.h"
#include "diagnose/oom_classification.h"
#include "diagnose/remat_frontier.h"
#include "model/trace.h"

namespace dtr {

// The options of the verdicts, as `dtrcheck explain` takes them. Without Z3
// (the default) a verdict costs a few replays and does not depend on a
// solver's time limit; with it a budget can take tens of seconds.
struct VerdictOptions {
  bool z3 = false;              // explain without --no-z3
  double timeout_seconds = 10;  // explain --timeout
  int32_t windows = 6;          // explain --windows
  int32_t window_ops = 6;       // explain --window-ops
  bool cut = true;              // explain without --no-cut
};
// What ExplainOom is given for these options.
ClassifyOptions ClassifyOptionsFor(const VerdictOptions& options);
// The explain flags that ask for the same, each with a leading space
// (" --no-z3"); empty for explain's defaults.
std::string ExplainFlagsFor(const VerdictOptions& options);

struct ReportOptions {
  std::string trace_name;    // shown as the trace's name
  std::string trace_source;  // where it came from: a path, or how it was generated
  // The trace argument of the `dtrcheck explain` / `diff` commands the report
  // prints to redo a verdict or a divergence by hand (default: trace_source).
  std::string command_trace;
  const HeuristicSpec* heuristic = nullptr;
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  std::string ratios_text;  // the grid as the user wrote it
  std::vector<Ratio> ratios;
  std::optional<double> overhead_limit;
  // The run whose memory timeline is drawn; default: the first OOM run, else
  // the run of the lowest ratio. Must be one of `ratios`.
  std::optional<Ratio> timeline_ratio;
  // The factor of the regime and cliff rules (diagnose/budget_curve.h):
  // neighbouring feasible budgets whose overheads differ by more than it are
  // a cliff.
  double cliff_factor = 1.25;
  // At most this many points in the timeline; longer runs are reduced to the
  // lowest and highest memory of each of max_timeline_points / 2 event buckets.
  int max_timeline_points = 3000;
  int jobs = 0;         // sweep threads (0: one per core)
  ProgressFn progress;  // called as runs finish (done, total), per stage
  // Called when a stage starts: "grid", "frontiers", "atlas", "verdicts",
  // "divergence".
  std::function<void(const std::string&)> stage;

  // The exact atlas over [lowest, highest grid budget]; skipped (with a note)
  // once it has done atlas_max_runs replays without covering the range.
  bool atlas = true;
  size_t atlas_max_runs = 2000;
  // Verdicts: explain's classification at every OOM row.
  bool verdicts = true;
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
  // Copies of what CurveShape says about this row: its regime (index into
  // CurveShape::analysis.regimes) and, for an OOM row inside a feasibility
  // inversion, that inversion (index into CurveShape::analysis.inversions).
  int regime = -1;
  std::optional<size_t> inversion;
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
  // With a complete atlas: the inversions of the atlas itself, each linked to
  // the grid inversion it contains, if any.
  std::optional<std::vector<ExactInversion>> exact_inversions;
};

struct TimelinePoint {
  int64_t event = 0;   // computation index
  int64_t clock = 0;   // after the computation
  int64_t memory = 0;  // right after its outputs were allocated
  bool remat = false;
};

struct MemoryTimeline {
  size_t run = 0;
  std::string
      selection;  // why this run: "first OOM run", "lowest ratio", "chosen with --timeline-ratio"
  int64_t budget = 0;
  int64_t events = 0;  // computations in the run
  int64_t remat_events = 0;
  bool reduced = false;  // points are per-bucket extremes, not every computation
  std::vector<TimelinePoint> points;
  std::vector<int64_t>
      decision_events;  // event of each heuristic eviction (reduced to one per bucket if long)
  std::optional<OomContext> oom;  // the failure point of an OOM run
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

// The exact budget atlas over the grid's byte range (checker/budget_atlas.h).
struct ReportAtlas {
  int64_t lo = 0, hi = 0;  // bytes: the lowest and the highest grid budget
  size_t max_runs = 0;     // the cap it ran under
  // The walk itself; when it stopped at the cap (atlas.stopped), only its
  // replay count and covered bytes are known.
  BudgetAtlas atlas;
  // Maximal stretches of adjacent infeasible (OOM or thrash) intervals, exact
  // in bytes: what the budget curve draws as failing bands.
  std::vector<std::pair<int64_t, int64_t>> infeasible;
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

struct ReportModel {
  TraceFacts trace;
  std::string heuristic, runtime, ratios_text;
  std::optional<double> overhead_limit;
  double cliff_factor = 1.25;
  std::vector<BudgetRow> rows;
  CurveShape curve;
  std::optional<MemoryTimeline> timeline;  // absent only for an empty grid
  std::optional<std::vector<OomFrontier>> frontiers;
  std::optional<ReportAtlas> atlas;
  std::optional<std::vector<BudgetVerdict>> verdicts;
  std::optional<std::vector<RegimeDivergence>> divergence;
  // Why an optional section is absent (turned off, or not applicable); shown
  // in its place. Empty when the section is there.
  std::string frontiers_skipped, atlas_skipped, verdicts_skipped, divergence_skipped;
  // The options the verdicts were computed with, as explain flags ("" for
  // explain's defaults).
  std::string explain_flags;
};

// Replays the grid (in parallel, with progress), then the selected timeline
// run once more with an observer, then the frontier of each distinct OOM
// state and the optional analyses the options ask for. Throws Error for an
// empty grid or a timeline ratio not on it.
ReportModel BuildReport(const Trace& trace, const ReportOptions& options);

// The curve's shape from rows alone (sorted by budget): AnalyzeScan over
// their points, the OOM stretches, and each row's regime and inversion.
CurveShape AnalyzeCurve(std::vector<BudgetRow>& rows, double cliff_factor);

}  // namespace dtr
