#include "checker/grid_checkpoint.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <utility>

#include "model/error.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

// A field added to RunResult must be added to RunResultJson and back; the
// sizes (x86-64, libstdc++) fail the build until it is.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(RunResult) == 408, "RunResult changed: update RunResultJson, then this size");
static_assert(sizeof(OomContext) == 176, "OomContext changed: update RunResultJson, then this size");
static_assert(sizeof(ScriptFailure) == 48, "ScriptFailure changed: update RunResultJson, then this size");
#endif

ordered_json CountsJson(const std::vector<int32_t>& counts) {
  ordered_json nonzero = ordered_json::array();
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != 0) nonzero.push_back({i, counts[i]});
  return {{"size", counts.size()}, {"nonzero", std::move(nonzero)}};
}

std::vector<int32_t> CountsFromJson(const ordered_json& j) {
  size_t size = j.at("size").get<size_t>();
  if (size > (size_t{1} << 32)) throw InputError("per-storage counts longer than 2^32");
  std::vector<int32_t> counts(size, 0);
  for (const ordered_json& pair : j.at("nonzero")) {
    size_t i = pair.at(0).get<size_t>();
    if (i >= size) throw InputError(fmt::format("per-storage count at {} of {}", i, size));
    counts[i] = pair.at(1).get<int32_t>();
  }
  return counts;
}

}  // namespace

ordered_json RunResultJson(const RunResult& r) {
  ordered_json j;
  j["result"] = std::string(OutcomeName(r.outcome));
  j["budget"] = r.budget;
  j["clock"] = r.clock;
  j["remat_compute"] = r.remat_compute;
  j["model_compute"] = r.model_compute;
  j["heuristic_evals"] = r.heuristic_evals;
  j["max_memory"] = r.max_memory;
  j["bottleneck_memory"] = r.bottleneck_memory;
  j["const_memory"] = r.const_memory;
  j["heuristic_evictions"] = r.heuristic_evictions;
  j["eager_evictions"] = r.eager_evictions;
  j["distinct_heuristic_evicted"] = r.distinct_heuristic_evicted;
  j["distinct_evicted"] = r.distinct_evicted;
  j["evict_count"] = CountsJson(r.evict_count);
  j["heuristic_evict_count"] = CountsJson(r.heuristic_evict_count);
  j["events"] = r.events;
  j["budget_lo"] = r.budget_lo;
  j["budget_hi"] = r.budget_hi;
  if (r.oom) {
    const OomContext& o = *r.oom;
    j["oom"] = {{"program_op", o.program_op},
                {"op", o.op},
                {"tensor", o.tensor},
                {"request", o.request},
                {"memory_usage", o.memory_usage},
                {"pinned_memory", o.pinned_memory},
                {"locked_memory", o.locked_memory},
                {"locked_storages", o.locked_storages},
                {"remat_depth", o.remat_depth},
                {"program_step", o.program_step},
                {"event", o.event},
                {"frames", o.frames}};
  } else {
    j["oom"] = nullptr;
  }
  if (r.script_failure)
    j["script_failure"] = {{"entry", r.script_failure->entry},
                           {"event", r.script_failure->event},
                           {"reason", r.script_failure->reason}};
  else
    j["script_failure"] = nullptr;
  return j;
}

RunResult RunResultFromJson(const ordered_json& j) {
  RunResult r;
  r.outcome = OutcomeOfLine(j.at("result").get<std::string>());
  r.budget = j.at("budget").get<int64_t>();
  r.clock = j.at("clock").get<int64_t>();
  r.remat_compute = j.at("remat_compute").get<int64_t>();
  r.model_compute = j.at("model_compute").get<int64_t>();
  r.heuristic_evals = j.at("heuristic_evals").get<int64_t>();
  r.max_memory = j.at("max_memory").get<int64_t>();
  r.bottleneck_memory = j.at("bottleneck_memory").get<int64_t>();
  r.const_memory = j.at("const_memory").get<int64_t>();
  r.heuristic_evictions = j.at("heuristic_evictions").get<int64_t>();
  r.eager_evictions = j.at("eager_evictions").get<int64_t>();
  r.distinct_heuristic_evicted = j.at("distinct_heuristic_evicted").get<int32_t>();
  r.distinct_evicted = j.at("distinct_evicted").get<int32_t>();
  r.evict_count = CountsFromJson(j.at("evict_count"));
  r.heuristic_evict_count = CountsFromJson(j.at("heuristic_evict_count"));
  r.events = j.at("events").get<int64_t>();
  r.budget_lo = j.at("budget_lo").get<int64_t>();
  r.budget_hi = j.at("budget_hi").get<int64_t>();
  if (const ordered_json& o = j.at("oom"); !o.is_null()) {
    OomContext& c = r.oom.emplace();
    c.program_op = o.at("program_op").get<std::string>();
    c.op = o.at("op").get<std::string>();
    c.tensor = o.at("tensor").get<std::string>();
    c.request = o.at("request").get<int64_t>();
    c.memory_usage = o.at("memory_usage").get<int64_t>();
    c.pinned_memory = o.at("pinned_memory").get<int64_t>();
    c.locked_memory = o.at("locked_memory").get<int64_t>();
    c.locked_storages = o.at("locked_storages").get<int32_t>();
    c.remat_depth = o.at("remat_depth").get<int32_t>();
    c.program_step = o.at("program_step").get<int32_t>();
    c.event = o.at("event").get<int64_t>();
    c.frames = o.at("frames").get<std::vector<TensorId>>();
  }
  if (const ordered_json& f = j.at("script_failure"); !f.is_null()) {
    ScriptFailure& s = r.script_failure.emplace();
    s.entry = f.at("entry").get<int64_t>();
    s.event = f.at("event").get<int64_t>();
    s.reason = f.at("reason").get<std::string>();
  }
  if (r.budget < r.budget_lo || r.budget > r.budget_hi)
    throw InputError(fmt::format("budget {} is not inside its run's [{}, {}]", r.budget, r.budget_lo, r.budget_hi));
  return r;
}

GridKey GridKeyOf(const TraceFingerprint& trace, const ReplaySettings& settings, std::vector<std::string> heuristics,
                  std::string ratios) {
  GridKey k;
  k.trace = trace;
  k.heuristics = std::move(heuristics);
  k.runtime = std::string(RuntimeName(settings.runtime));
  k.overhead_limit = settings.overhead_limit;
  k.seed = settings.seed;
  k.ratios = std::move(ratios);
  return k;
}

ordered_json GridHeader(std::string_view command, const GridKey& k) {
  ordered_json j = CheckpointHeader(command, k.trace);
  j["heuristics"] = k.heuristics;
  j["runtime"] = k.runtime;
  j["overhead_limit"] = k.overhead_limit ? ordered_json(*k.overhead_limit) : ordered_json(nullptr);
  j["seed"] = k.seed;
  j["ratios"] = k.ratios;
  return j;
}

GridCheckpoint::GridCheckpoint(const std::string& path, const ordered_json& header)
    : journal_(path, header, "grid") {
  const std::vector<std::string> heuristics = header.at("heuristics").get<std::vector<std::string>>();
  std::map<std::pair<std::string, int64_t>, int> seen;  // point -> its line
  for (const CheckpointJournal::Entry& e : journal_.entries()) {
    GridPointResult p;
    try {
      p.heuristic = e.fields.at("heuristic").get<std::string>();
      p.result = RunResultFromJson(e.fields);
    } catch (const nlohmann::json::exception& x) {
      journal_.FailAt(e.line, fmt::format("not a grid point line ({})", x.what()));
    } catch (const Error& x) {
      journal_.FailAt(e.line, x.what());
    }
    if (std::find(heuristics.begin(), heuristics.end(), p.heuristic) == heuristics.end())
      journal_.FailAt(e.line, fmt::format("heuristic '{}' is not one of the grid's", p.heuristic));
    auto [at, fresh] = seen.emplace(std::pair{p.heuristic, p.result.budget}, e.line);
    if (!fresh)
      journal_.FailAt(e.line, fmt::format("the point {} at budget {} is on line {} already", p.heuristic,
                                          p.result.budget, at->second));
    finished_.push_back(std::move(p));
  }
}

void GridCheckpoint::Append(const GridPointResult& point) {
  ordered_json j;
  j["heuristic"] = point.heuristic;
  j.update(RunResultJson(point.result));
  journal_.Append(j);
}

GridJournal GridCheckpoint::Journal() {
  GridJournal j;
  j.finished = finished_;
  j.record = [this](const GridPointResult& p) { Append(p); };
  return j;
}

}  // namespace dtr
