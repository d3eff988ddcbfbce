#include "reports/run_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <filesystem>

#include "model/attribution.h"
#include "reports/pinned_floor_report.h"
#include "diagnose/budget_headline.h"

namespace dtr {

TraceSummary Summarize(const std::string& trace_path, const Baseline& baseline) {
  return {std::filesystem::path(trace_path).filename().string(), baseline};
}

nlohmann::ordered_json RunJson(const TraceSummary& summary, const RunRecord& run, const Trace* trace) {
  const RunResult& r = run.result;
  nlohmann::ordered_json j;
  j["log"] = summary.log;
  j["heuristic"] = std::string(run.spec.heuristic->name);
  j["runtime"] = std::string(RuntimeName(run.spec.runtime));
  j["baseline_memory"] = summary.baseline.memory;
  j["baseline_compute"] = summary.baseline.compute;
  j["const_memory"] = summary.baseline.const_memory;
  j["bottleneck_memory"] = summary.baseline.bottleneck_memory;
  if (run.spec.overhead_limit) j["overhead_limit"] = *run.spec.overhead_limit;
  if (run.spec.ratio)
    j["ratio"] = run.spec.ratio->value;
  else
    j["ratio"] = nullptr;
  WriteRunCounters(j, run);
  if (r.oom) j["oom"] = OomContextJson(*r.oom, trace);
  j["budget_lo"] = r.budget_lo;
  j["budget_hi"] = r.budget_hi;
  return j;
}

void WriteRunCounters(nlohmann::ordered_json& j, const RunRecord& run) {
  const RunResult& r = run.result;
  j["budget"] = r.budget;
  j["result"] = std::string(OutcomeName(r.outcome));
  j["overhead"] = run.overhead;
  j["clock"] = r.clock;
  j["remat_compute"] = r.remat_compute;
  j["model_compute"] = r.model_compute;
  j["heuristic_evals"] = r.heuristic_evals;
  j["max_memory"] = r.max_memory;
  j["heuristic_evictions"] = r.heuristic_evictions;
  j["distinct_heuristic_evicted"] = r.distinct_heuristic_evicted;
  j["eager_evictions"] = r.eager_evictions;
  j["evictions"] = r.evictions();
  j["distinct_evicted"] = r.distinct_evicted;
}

nlohmann::ordered_json OomContextJson(const OomContext& o, const Trace* trace) {
  nlohmann::ordered_json j;
  j["op"] = o.op;
  if (trace) AddOriginJson(j, *trace, FindOperator(*trace, o.op));
  j["tensor"] = o.tensor;
  j["request"] = o.request;
  j["memory_usage"] = o.memory_usage;
  j["pinned_memory"] = o.pinned_memory;
  j["locked_memory"] = o.locked_memory;
  j["locked_storages"] = o.locked_storages;
  j["remat_depth"] = o.remat_depth;
  j["program_op"] = o.program_op;
  if (trace) AddOriginJson(j, *trace, FindOperator(*trace, o.program_op), "program_op_");
  return j;
}

namespace {

std::string RatioText(const RunRecord& run) { return run.spec.ratio ? run.spec.ratio->text : "-"; }

std::string Bytes(int64_t b) {
  if (b >= 1'000'000'000) return fmt::format("{:.3f} GB", b / 1e9);
  if (b >= 1'000'000) return fmt::format("{:.3f} MB", b / 1e6);
  return fmt::format("{} B", b);
}

}  // namespace

void PrintRunText(std::ostream& out, const TraceSummary& summary, const RunRecord& run, const Trace* trace) {
  const RunResult& r = run.result;
  fmt::print(out, "{}  {} on {}\n", summary.log, run.spec.heuristic->name, RuntimeName(run.spec.runtime));
  fmt::print(out, "  budget      {} bytes (ratio {}, {})\n", r.budget, RatioText(run), Bytes(r.budget));
  fmt::print(out, "  result      {}\n", OutcomeName(r.outcome));
  fmt::print(out, "  overhead    {} (clock {}, baseline compute {})\n", run.overhead, r.clock,
             summary.baseline.compute);
  fmt::print(out, "  compute     model {}, remat {}\n", r.model_compute, r.remat_compute);
  fmt::print(out, "  memory      peak {} of budget {}\n", r.max_memory, r.budget);
  fmt::print(out, "  evictions   {} heuristic ({} distinct storages), {} eager, {} in all ({} distinct)\n",
             r.heuristic_evictions, r.distinct_heuristic_evicted, r.eager_evictions, r.evictions(),
             r.distinct_evicted);
  fmt::print(out, "  heuristic   {} evaluations\n", r.heuristic_evals);
  fmt::print(out, "  same run    for every budget in [{}, {}] bytes\n", r.budget_lo, r.budget_hi);
  if (r.oom) {
    const OomContext& o = *r.oom;
    auto label = [&](const std::string& op) { return trace ? OperatorLabel(*trace, op) : op; };
    fmt::print(out, "  OOM while computing {} (program operator {}), {} pending rematerializations below it\n",
               label(o.op), o.program_op == o.op ? o.program_op : label(o.program_op), o.remat_depth);
    fmt::print(out, "      request {} + in use {} > budget {}; pool empty\n", o.request, o.memory_usage, r.budget);
    fmt::print(out, "      in use: pinned {}, locked {} in {} storages\n", o.pinned_memory, o.locked_memory,
               o.locked_storages);
  }
}

nlohmann::ordered_json StorageEvictionsJson(const Trace& trace, const RunResult& run) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  // Appended to the object's vector directly: operator[] would search the
  // keys so far (ordered_json is a vector of pairs), quadratic in the
  // storages. The keys are distinct: each storage has its own root tensor
  // and tensor names are unique.
  auto& fields = j.get_ref<nlohmann::ordered_json::object_t&>();
  for (size_t s = 0; s < run.evict_count.size(); ++s)
    if (run.evict_count[s] > 0)
      fields.emplace_back(trace.tensors[trace.storages[s].root].name,
                          nlohmann::ordered_json{run.evict_count[s], run.heuristic_evict_count[s]});
  return j;
}

void PrintStorageEvictionsText(std::ostream& out, const Trace& trace, const RunResult& run, size_t limit) {
  std::vector<size_t> order;
  for (size_t s = 0; s < run.evict_count.size(); ++s)
    if (run.evict_count[s] > 0) order.push_back(s);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return run.evict_count[a] > run.evict_count[b]; });
  fmt::print(out, "  {} storages evicted; most evicted first:\n", order.size());
  fmt::print(out, "  {:<12} {:>12} {:>10} {:>10}\n", "storage", "size", "evictions", "heuristic");
  for (size_t i = 0; i < order.size() && (limit == 0 || i < limit); ++i) {
    size_t s = order[i];
    fmt::print(out, "  {:<12} {:>12} {:>10} {:>10}\n", trace.tensors[trace.storages[s].root].name,
               trace.storages[s].size, run.evict_count[s], run.heuristic_evict_count[s]);
  }
  if (limit != 0 && order.size() > limit) fmt::print(out, "  ... {} more (--storages 0 lists all)\n", order.size() - limit);
}

void PrintSweepText(std::ostream& out, const TraceSummary& summary, const std::vector<RunRecord>& runs) {
  fmt::print(out, "{}: baseline memory {}, baseline compute {}\n", summary.log, summary.baseline.memory,
             summary.baseline.compute);
  fmt::print(out, "{:<16} {:<8} {:>12} {:>7} {:>9} {:>10} {:>9} {:>9}\n", "heuristic", "ratio", "budget", "result",
             "overhead", "evictions", "distinct", "evals");
  // Overheads to 4 decimals (--json and --csv keep every digit); none for an
  // OOM run, whose clock at the failure is no result.
  for (const RunRecord& run : runs) {
    const RunResult& r = run.result;
    std::string overhead = r.outcome == Outcome::kOom ? "" : fmt::format("{:.4f}", run.overhead);
    fmt::print(out, "{:<16} {:<8} {:>12} {:>7} {:>9} {:>10} {:>9} {:>9}\n", run.spec.heuristic->name, RatioText(run),
               r.budget, OutcomeName(r.outcome), overhead, r.evictions(), r.distinct_evicted, r.heuristic_evals);
  }
}

namespace {

struct TraceCounts {
  size_t constants = 0, aliases = 0;
};

TraceCounts CountTrace(const Trace& trace) {
  TraceCounts c;
  for (const Operator& op : trace.ops) c.constants += op.is_constant;
  for (const Tensor& t : trace.tensors) c.aliases += t.is_alias;
  return c;
}

}  // namespace

void PrintTraceInfo(std::ostream& out, const Trace& trace, const TraceSummary& summary) {
  TraceCounts c = CountTrace(trace);
  fmt::print(out, "{}\n", summary.log);
  // The answer first: the floor no schedule gets under (diagnose/budget_headline.h).
  const MemoryBound bound = ComputeMemoryBound(trace);
  fmt::print(out, "  proven floor       {} bytes (ratio {:.4f}): no eviction schedule fits below it ({}); "
                  "`dtrcheck report` finds the smallest budget that passes\n",
             bound.bytes, static_cast<double>(bound.bytes) / static_cast<double>(summary.baseline.memory),
             StaticFloorCause(trace, bound));
  fmt::print(out, "  operators          {} ({} constants)\n", trace.ops.size(), c.constants);
  fmt::print(out, "  tensors            {} ({} aliases)\n", trace.tensors.size(), c.aliases);
  fmt::print(out, "  storages           {}\n", trace.storages.size());
  fmt::print(out, "  program steps      {}\n", trace.program.size());
  fmt::print(out, "  baseline memory    {} bytes ({})\n", summary.baseline.memory, Bytes(summary.baseline.memory));
  fmt::print(out, "  baseline compute   {}\n", summary.baseline.compute);
  fmt::print(out, "  constant memory    {} bytes\n", summary.baseline.const_memory);
  fmt::print(out, "  bottleneck memory  {} bytes\n", summary.baseline.bottleneck_memory);
  if (std::optional<PinnedFloor> floor = ExplainPinnedFloor(trace))
    PrintPinnedFloorText(out, trace, *floor, summary.baseline);
}

nlohmann::ordered_json TraceInfoJson(const Trace& trace, const TraceSummary& summary) {
  TraceCounts c = CountTrace(trace);
  nlohmann::ordered_json j = {{"log", summary.log},
          {"operators", trace.ops.size()},
          {"constants", c.constants},
          {"tensors", trace.tensors.size()},
          {"aliases", c.aliases},
          {"storages", trace.storages.size()},
          {"program_steps", trace.program.size()},
          {"baseline_memory", summary.baseline.memory},
          {"baseline_compute", summary.baseline.compute},
          {"const_memory", summary.baseline.const_memory},
          {"bottleneck_memory", summary.baseline.bottleneck_memory}};
  if (std::optional<PinnedFloor> floor = ExplainPinnedFloor(trace))
    j["pinned_floor"] = PinnedFloorJson(trace, *floor, summary.baseline);
  return j;
}

}  // namespace dtr
