#include "checker/atlas_checkpoint.h"

#include <fmt/core.h>

#include <iterator>
#include <map>

#include "model/error.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

ordered_json IntervalJson(const AtlasInterval& iv) {
  ordered_json j;
  j["lo"] = iv.lo;
  j["hi"] = iv.hi;
  j["run_lo"] = iv.run_lo;
  j["run_hi"] = iv.run_hi;
  j["result"] = std::string(OutcomeName(iv.behaviour.outcome));
  j["clock"] = iv.behaviour.clock;
  j["heuristic_evictions"] = iv.behaviour.heuristic_evictions;
  j["evictions"] = iv.behaviour.evictions;
  j["distinct_evicted"] = iv.behaviour.distinct_evicted;
  j["distinct_heuristic_evicted"] = iv.distinct_heuristic_evicted;
  j["remat_compute"] = iv.remat_compute;
  j["heuristic_evals"] = iv.heuristic_evals;
  return j;
}

AtlasInterval IntervalFromJson(const ordered_json& j, const Baseline& baseline) {
  AtlasInterval iv;
  iv.lo = j.at("lo").get<int64_t>();
  iv.hi = j.at("hi").get<int64_t>();
  iv.run_lo = j.at("run_lo").get<int64_t>();
  iv.run_hi = j.at("run_hi").get<int64_t>();
  iv.behaviour.outcome = OutcomeOfLine(j.at("result").get<std::string>());
  iv.behaviour.clock = j.at("clock").get<int64_t>();
  iv.behaviour.heuristic_evictions = j.at("heuristic_evictions").get<int64_t>();
  iv.behaviour.evictions = j.at("evictions").get<int64_t>();
  iv.behaviour.distinct_evicted = j.at("distinct_evicted").get<int32_t>();
  iv.distinct_heuristic_evicted = j.at("distinct_heuristic_evicted").get<int32_t>();
  iv.remat_compute = j.at("remat_compute").get<int64_t>();
  iv.heuristic_evals = j.at("heuristic_evals").get<int64_t>();
  // As BuildAtlas computes them from the run.
  iv.overhead = Overhead(iv.behaviour.clock, baseline.compute);
  iv.evictions_per_evicted =
      iv.behaviour.distinct_evicted > 0
          ? static_cast<double>(iv.behaviour.evictions) / iv.behaviour.distinct_evicted
          : 0;
  if (iv.hi < iv.lo || iv.lo < iv.run_lo || iv.hi > iv.run_hi)
    throw InputError(fmt::format("interval [{}, {}] is not inside its run's [{}, {}]", iv.lo, iv.hi,
                                 iv.run_lo, iv.run_hi));
  return iv;
}

}  // namespace

AtlasWalkKey WalkKeyOf(const TraceFingerprint& trace, const ReplaySettings& spec, int64_t lo_bytes, int64_t hi_bytes) {
  AtlasWalkKey k;
  k.trace = trace;
  k.heuristic = std::string(spec.heuristic->name);
  k.replay = ReplayKeyOf(spec);
  k.budget_lo = lo_bytes;
  k.budget_hi = hi_bytes;
  return k;
}

ordered_json AtlasHeader(const AtlasWalkKey& k) {
  ordered_json j = CheckpointHeader("atlas", k.trace);
  j["heuristic"] = k.heuristic;
  AddReplayKey(j, k.replay);
  j["budget_lo"] = k.budget_lo;
  j["budget_hi"] = k.budget_hi;
  return j;
}

AtlasCheckpoint::AtlasCheckpoint(const std::string& path, const ordered_json& header, const Baseline& baseline,
                                 int64_t budget_lo, int64_t budget_hi)
    : journal_(path, header, "walk") {
  std::map<int64_t, std::pair<int64_t, int>> seen;  // lo -> (hi, line) of the lines read
  for (const CheckpointJournal::Entry& e : journal_.entries()) {
    try {
      finished_.push_back(IntervalFromJson(e.fields, baseline));
    } catch (const nlohmann::json::exception& x) {
      journal_.FailAt(e.line, fmt::format("not an interval line ({})", x.what()));
    } catch (const Error& x) {
      journal_.FailAt(e.line, x.what());
    }
    const AtlasInterval& iv = finished_.back();
    if (iv.lo < budget_lo || iv.hi > budget_hi)
      journal_.FailAt(e.line, fmt::format("interval [{}, {}] is outside the range [{}, {}]", iv.lo, iv.hi,
                                          budget_lo, budget_hi));
    // Intervals of one walk never overlap: an overlap is a duplicated or edited line.
    auto next = seen.upper_bound(iv.lo);
    for (auto it : {next == seen.begin() ? seen.end() : std::prev(next), next})
      if (it != seen.end() && it->first <= iv.hi && iv.lo <= it->second.first)
        journal_.FailAt(e.line, fmt::format("interval [{}, {}] overlaps [{}, {}] on line {}", iv.lo, iv.hi,
                                            it->first, it->second.first, it->second.second));
    seen[iv.lo] = {iv.hi, e.line};
  }
}

void AtlasCheckpoint::Append(const AtlasInterval& interval) { journal_.Append(IntervalJson(interval)); }

AtlasJournal AtlasCheckpoint::Journal() {
  AtlasJournal j;
  j.finished = finished_;
  j.record = [this](const AtlasInterval& iv) { Append(iv); };
  return j;
}

}  // namespace dtr
