#include "checker/engine/heuristic.h"

#include <fmt/core.h>

#include "model/echo.h"
#include "model/error.h"

namespace dtr {

namespace {
constexpr unsigned R = kFeatureRegions, E = kFeatureEqClass, L = kFeatureLastAccess;
}  // namespace

const std::vector<HeuristicSpec>& AllHeuristics() {
  static const std::vector<HeuristicSpec> kAll = {
      {"DTR", CostTerm::kRegions, true, true, R | L, "e*(s) / (size * staleness)"},
      {"DTREqClass", CostTerm::kEqClass, true, true, E | L, "eq(s) / (size * staleness)"},
      {"DTRLocal", CostTerm::kLocal, true, true, L, "compute / (size * staleness)"},
      {"DTRUnopt", CostTerm::kUnoptimized, true, true, L,
       "e*(s) from scratch / (size * staleness of the newest neighbour)"},
      {"MSPS", CostTerm::kReverseRegion, true, false, R, "(compute + reverse region) / size"},
      {"LRU", CostTerm::kLastAccess, false, false, L, "last access time"},
      {"LargestStorage", CostTerm::kOne, true, false, 0, "1 / size"},
      {"RandomStorage", CostTerm::kRandom, false, false, 0, "uniform random (own seeded RNG)"},
      {"AbESizeStale", CostTerm::kRegions, true, true, R | L, "e*(s) / (size * staleness)"},
      {"AbESize", CostTerm::kRegions, true, false, R, "e*(s) / size"},
      {"AbEStale", CostTerm::kRegions, false, true, R | L, "e*(s) / staleness"},
      {"AbE", CostTerm::kRegions, false, false, R, "e*(s)"},
      {"AbEqSizeStale", CostTerm::kEqClass, true, true, E | L, "eq(s) / (size * staleness)"},
      {"AbEqSize", CostTerm::kEqClass, true, false, E, "eq(s) / size"},
      {"AbEqStale", CostTerm::kEqClass, false, true, E | L, "eq(s) / staleness"},
      {"AbEq", CostTerm::kEqClass, false, false, E, "eq(s)"},
      {"AbLocalSizeStale", CostTerm::kLocal, true, true, L, "compute / (size * staleness)"},
      {"AbLocalSize", CostTerm::kLocal, true, false, 0, "compute / size"},
      {"AbLocalStale", CostTerm::kLocal, false, true, L, "compute / staleness"},
      {"AbLocal", CostTerm::kLocal, false, false, 0, "compute"},
      {"AbSizeStale", CostTerm::kOne, true, true, L, "1 / (size * staleness)"},
      {"AbSize", CostTerm::kOne, true, false, 0, "1 / size"},
      {"AbStale", CostTerm::kOne, false, true, L, "1 / staleness"},
      {"AbRandom", CostTerm::kRandom, false, false, 0, "uniform random (own seeded RNG)"},
  };
  return kAll;
}

const HeuristicSpec& FindHeuristic(std::string_view name) {
  for (const HeuristicSpec& h : AllHeuristics())
    if (h.name == name) return h;
  std::string known;
  for (const HeuristicSpec& h : AllHeuristics()) known += fmt::format("{}{}", known.empty() ? "" : ", ", h.name);
  throw Error(fmt::format("unknown heuristic '{}' (known: {})", Echo(name), known));
}

std::vector<std::string_view> AblationNames() {
  std::vector<std::string_view> out;
  for (const HeuristicSpec& h : AllHeuristics())
    if (h.name.substr(0, 2) == "Ab") out.push_back(h.name);
  return out;
}

}  // namespace dtr
