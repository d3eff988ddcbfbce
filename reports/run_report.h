// Renders replay results: one JSON object per run whose field names are those
// of simrd's reference files (docs/run_json.md), and a plain-text table.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "checker/drivers/sweep.h"

namespace dtr {

struct TraceSummary {
  std::string log;  // file name of the trace
  Baseline baseline;
};

TraceSummary Summarize(const std::string& trace_path, const Baseline& baseline);

// Header fields of the trace and the run, then the run's own fields. With
// the trace, the OOM context says where its operators come from (where the
// trace has attribution keys: OomContextJson).
nlohmann::ordered_json RunJson(const TraceSummary& summary, const RunRecord& run,
                               const Trace* trace = nullptr);

// The run's counters under simrd's reference names, in RunJson's order:
// budget, result, overhead, clock, remat_compute, model_compute,
// heuristic_evals, max_memory, heuristic_evictions,
// distinct_heuristic_evicted, eager_evictions, evictions, distinct_evicted.
// The one writer of these fields: RunJson and the report's runs[] both use it.
void WriteRunCounters(nlohmann::ordered_json& j, const RunRecord& run);
// An OOM context under simrd's names, in its order: op, tensor, request,
// memory_usage, pinned_memory, locked_memory, locked_storages, remat_depth,
// program_op. With a trace that has attribution keys, "module" and "source"
// follow "op", "program_op_module" and "program_op_source" follow
// "program_op", each where the trace has it.
nlohmann::ordered_json OomContextJson(const OomContext& oom, const Trace* trace = nullptr);

// With the trace, the OOM's operators are named with their origin (OperatorLabel).
void PrintRunText(std::ostream& out, const TraceSummary& summary, const RunRecord& run,
                  const Trace* trace = nullptr);

// Per-storage eviction counts of a run: {"x123": [evictions, heuristic evictions], ...}
// for every storage evicted at least once, named by its root tensor.
nlohmann::ordered_json StorageEvictionsJson(const Trace& trace, const RunResult& run);
// The same as a table, most evicted first; `limit` rows at most (0: all).
void PrintStorageEvictionsText(std::ostream& out, const Trace& trace, const RunResult& run, size_t limit);
void PrintSweepText(std::ostream& out, const TraceSummary& summary, const std::vector<RunRecord>& runs);
void PrintTraceInfo(std::ostream& out, const Trace& trace, const TraceSummary& summary);
// What PrintTraceInfo shows, as one JSON object (`info --json`): log,
// operators, constants, tensors, aliases, storages, program_steps, then the
// baseline under simrd's reference names (baseline_memory, baseline_compute,
// const_memory, bottleneck_memory).
nlohmann::ordered_json TraceInfoJson(const Trace& trace, const TraceSummary& summary);

}  // namespace dtr
