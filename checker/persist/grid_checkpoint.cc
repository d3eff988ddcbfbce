#include "checker/persist/grid_checkpoint.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "checker/engine/run_result_fields.h"
#include "checker/persist/field_json.h"
#include "model/error.h"

namespace dtr {

using nlohmann::ordered_json;

ordered_json RunResultJson(const RunResult& r) {
  ordered_json j;
  VisitFields(r, FieldToJson{j});
  return j;
}

RunResult RunResultFromJson(const ordered_json& j) {
  RunResult r;
  VisitFields(r, FieldFromJson{j});
  if (r.budget < r.budget_lo || r.budget > r.budget_hi)
    throw InputError(fmt::format("budget {} is not inside its run's [{}, {}]", r.budget, r.budget_lo, r.budget_hi));
  return r;
}

GridKey GridKeyOf(const TraceFingerprint& trace, const ReplaySettings& settings, std::vector<std::string> heuristics,
                  std::string ratios) {
  GridKey k;
  k.trace = trace;
  k.heuristics = std::move(heuristics);
  k.replay = ReplayKeyOf(settings);
  k.ratios = std::move(ratios);
  return k;
}

ordered_json GridHeader(std::string_view command, const GridKey& k) {
  ordered_json j = CheckpointHeader(command, k.trace);
  j["heuristics"] = k.heuristics;
  AddReplayKey(j, k.replay);
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
