// The report of one trace under one (heuristic, runtime) over a ratio grid:
// every section a renderer shows, as plain data assembled from replays.
//
// Sections filled here come from the replay alone: the trace summary, one row
// per budget, the shape of the budget curve (OOM bands, feasibility
// inversions, cliffs), the memory timeline of one selected run and the pinned
// frontier of every distinct OOM run. The sections that need proofs or run
// comparisons (verdicts with certificates, divergence between regimes) are
// optional and stay empty until an analysis fills them; every renderer shows
// an empty optional section as "not computed" rather than hiding it.
//
// Row indices (`run`, `first_run`, ...) index ReportModel::rows, which is in
// increasing budget order (ties keep the grid's order).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/ratio_grid.h"
#include "checker/replay.h"
#include "checker/sweep.h"
#include "model/trace.h"

namespace dtr {

struct ReportOptions {
  std::string trace_name;    // shown as the trace's name
  std::string trace_source;  // where it came from: a path, or how it was generated
  const HeuristicSpec* heuristic = nullptr;
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  std::string ratios_text;  // the grid as the user wrote it
  std::vector<Ratio> ratios;
  std::optional<double> overhead_limit;
  // The run whose memory timeline is drawn; default: the first OOM run, else
  // the run of the lowest ratio. Must be one of `ratios`.
  std::optional<Ratio> timeline_ratio;
  // Neighbouring feasible budgets whose overheads differ by at least this
  // factor are reported as a cliff.
  double cliff_factor = 1.25;
  // At most this many points in the timeline; longer runs are reduced to the
  // lowest and highest memory of each of max_timeline_points / 2 event buckets.
  int max_timeline_points = 3000;
  int jobs = 0;         // sweep threads (0: one per core)
  ProgressFn progress;  // called as runs finish (done, total)
};

struct TraceFacts {
  std::string name, source;
  int64_t operators = 0, constants = 0, tensors = 0, aliases = 0, storages = 0, program_steps = 0;
  Baseline baseline;
};

struct BudgetRow {
  RunRecord run;
  // evictions / distinct evicted storages (0 when nothing was evicted): how
  // often the run re-evicts the same storage.
  double evictions_per_evicted_storage = 0;
  // An OOM with a feasible run at a lower budget on the grid.
  bool inversion = false;
};

// A maximal stretch of consecutive OOM rows.
struct OomBand {
  size_t first_run = 0, last_run = 0;
  // Byte intervals known to OOM (the rows' [budget_lo, budget_hi], adjacent
  // ones merged), in increasing order. Budgets between them were not replayed.
  std::vector<std::pair<int64_t, int64_t>> known_oom;
  bool feasible_below = false;  // some row below the band passes
  bool feasible_above = false;  // some row above the band passes
  // The band's lower (upper) edge is exact: the feasible row just below
  // (above) ends (starts) one byte before (after) a known OOM interval.
  bool exact_lower_edge = false, exact_upper_edge = false;
};

// Neighbouring feasible rows (no OOM between them) whose overheads differ by
// at least ReportOptions::cliff_factor.
struct Cliff {
  size_t low_run = 0, high_run = 0;  // the lower and the higher budget
  double factor = 1;                 // larger overhead / smaller overhead
};

struct CurveShape {
  std::vector<OomBand> oom_bands;
  std::vector<size_t> inversions;  // rows with BudgetRow::inversion
  std::vector<Cliff> cliffs;
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

// One pending materialization at an OOM, outermost (the program operator) first.
struct FrontierArg {
  std::string tensor;
  int64_t storage_size = 0;
  // "pinned": a pinned storage; "locked": material, unpinned, first held by
  // this frame; "held-above": locked, already counted for an outer frame;
  // "evicted": not material (still to be rematerialized, or being so).
  std::string state;
};

struct ReportFrame {
  int depth = 0;  // 0 for the program operator
  std::string tensor, op;
  int64_t output_size = 0;  // the operator's total output size
  std::vector<FrontierArg> args;
  int64_t locked_bytes = 0;  // sum over this frame's "locked" args
};

// One failure state: rows whose OOM context (frames included) is the same
// share one frontier, even if their runs differ before the failure.
struct OomFrontier {
  std::vector<size_t> runs;  // the rows, in budget order
  // Their distinct exact budget intervals ([budget_lo, budget_hi]), in order.
  std::vector<std::pair<int64_t, int64_t>> budget_intervals;
  OomContext oom;
  std::vector<ReportFrame> frames;
  int64_t pinned_bytes = 0;        // all pinned material storages at the OOM
  int64_t frame_locked_bytes = 0;  // sum of ReportFrame::locked_bytes
};

// Filled by a later analysis (OOM classification): one verdict per OOM row.
struct Verdict {
  size_t run = 0;
  std::string verdict;      // "policy-induced", "inherent" or "undetermined"
  std::string certificate;  // what proves it, for humans
  bool certificate_checked = false;
};

// Filled by a later analysis (divergence between regimes).
struct Divergence {
  size_t run_a = 0, run_b = 0;
  int64_t first_divergent_decision = -1;
  std::string summary;
};

struct ReportModel {
  TraceFacts trace;
  std::string heuristic, runtime, ratios_text;
  std::optional<double> overhead_limit;
  double cliff_factor = 1.25;
  std::vector<BudgetRow> rows;
  CurveShape curve;
  std::optional<MemoryTimeline> timeline;  // absent only for an empty grid
  std::vector<OomFrontier> frontiers;
  std::optional<std::vector<Verdict>> verdicts;
  std::optional<std::vector<Divergence>> divergence;
};

// Replays the grid (in parallel, with progress), then the selected timeline
// run and each distinct OOM run once more with an observer. Throws Error for
// an empty grid or a timeline ratio not on it.
ReportModel BuildReport(const Trace& trace, const ReportOptions& options);

// The curve's shape from rows alone (sorted by budget); exposed for tests.
CurveShape AnalyzeCurve(std::vector<BudgetRow>& rows, double cliff_factor);

}  // namespace dtr
