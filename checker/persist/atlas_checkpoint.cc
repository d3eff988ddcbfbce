#include "checker/persist/atlas_checkpoint.h"

#include <fmt/core.h>

#include <iterator>
#include <map>

#include "checker/persist/field_json.h"
#include "model/error.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

// The fields of an interval a checkpoint line stores, in its key order; the
// overheads are computed again on reading.
template <MaybeConst<AtlasInterval> I, typename Visit>
void VisitStoredFields(I& iv, Visit&& visit) {
  visit("lo", iv.lo);
  visit("hi", iv.hi);
  visit("run_lo", iv.run_lo);
  visit("run_hi", iv.run_hi);
  visit("result", iv.behaviour.outcome);
  visit("clock", iv.behaviour.clock);
  visit("heuristic_evictions", iv.behaviour.heuristic_evictions);
  visit("evictions", iv.behaviour.evictions);
  visit("distinct_evicted", iv.behaviour.distinct_evicted);
  visit("distinct_heuristic_evicted", iv.distinct_heuristic_evicted);
  visit("remat_compute", iv.remat_compute);
  visit("heuristic_evals", iv.heuristic_evals);
}

// A reminder that fails the build when a member is added to AtlasInterval
// without a decision here (stored, or computed again on reading like the
// overheads): size on x86-64 with libstdc++.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(AtlasInterval) == 112, "AtlasInterval changed: list the field in VisitStoredFields or compute it "
                                            "in IntervalFromJson, then update this size");
#endif

ordered_json IntervalJson(const AtlasInterval& iv) {
  ordered_json j;
  VisitStoredFields(iv, FieldToJson{j});
  return j;
}

AtlasInterval IntervalFromJson(const ordered_json& j, const Baseline& baseline) {
  AtlasInterval iv;
  VisitStoredFields(iv, FieldFromJson{j});
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
