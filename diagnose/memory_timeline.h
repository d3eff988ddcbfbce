// The memory of one run over its computations, with every eviction and
// rematerialization, recorded from the engine's observer events
// (ReplayObserver in checker/engine/run_result.h): what the report's timeline draws.
//
// Points are indexed by program step as well as by event, so that two runs
// of the same trace at different budgets line up: their computations of the
// same program operator share a step, whatever rematerializations each run
// inserted before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/drivers/sweep.h"
#include "checker/engine/run_result.h"
#include "model/trace.h"

namespace dtr {

struct TimelinePoint {
  int64_t event = 0;         // computation index
  int32_t program_step = 0;  // the program operator it is part of (index into Trace::program)
  int64_t clock = 0;         // after the computation
  int64_t memory = 0;        // right after its outputs were allocated
  bool remat = false;
  bool operator==(const TimelinePoint&) const = default;
};

// One eviction: by the heuristic (a decision) or eager (the runtime freed a
// storage whose last reference went away).
struct TimelineEviction {
  int64_t event = 0;  // made before computation `event`
  int32_t program_step = 0;
  StorageId storage = 0;
  int64_t bytes = 0;   // the storage's size
  int64_t memory = 0;  // memory in use when it was decided (heuristic), else 0
  bool heuristic = false;
  bool operator==(const TimelineEviction&) const = default;
};

struct TimelineRemat {
  int64_t event = 0;
  int32_t program_step = 0;
  TensorId tensor = 0;
  int64_t memory = 0;  // right after its outputs were allocated
  bool operator==(const TimelineRemat&) const = default;
};

struct MemoryTimeline {
  size_t run = 0;     // the row of the report (set by the caller)
  std::string role;   // what the run is in the figure, e.g. "last pass below the inversion"
  int64_t budget = 0;
  Outcome outcome = Outcome::kPass;
  int64_t events = 0;  // computations in the run
  int32_t program_steps = 0;  // in the trace: the x range
  int64_t remat_events = 0;
  int64_t heuristic_evictions = 0, eager_evictions = 0;
  // Points are per-bucket extremes (the lowest and the highest memory of
  // each of max_points / 2 event buckets), not every computation.
  bool reduced = false;
  std::vector<TimelinePoint> points;
  // Every eviction and rematerialization in order, unless there are more than
  // max_marks of a kind: then the first of each of max_marks event buckets
  // (marks_reduced; the counts above stay exact).
  bool marks_reduced = false;
  std::vector<TimelineEviction> evictions;
  std::vector<TimelineRemat> remats;
  std::optional<OomContext> oom;  // the failure point of an OOM run
};

// Replays `spec` with an observer: once when the run has at most
// `keep_at_most` computations, evictions and rematerializations of each
// kind, else twice (the first pass counts them, the second keeps only what
// the timeline shows), so memory stays bounded on runs of any length.
// max_points >= 2, max_marks >= 1.
MemoryTimeline RecordTimeline(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                              int max_points, int max_marks = 5000,
                              size_t keep_at_most = size_t{1} << 20);

}  // namespace dtr
