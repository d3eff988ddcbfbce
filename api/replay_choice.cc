#include "api/replay_choice.h"

#include <fmt/core.h>

#include "api/option_ranges.h"
#include "model/echo.h"
#include "model/error.h"

namespace dtr::api {

ReplaySettings ReplayChoice::Resolve() const { return Resolve(heuristic()); }

ReplaySettings ReplayChoice::Resolve(const std::string& name) const {
  if (name.find(',') != std::string::npos)
    throw Error(fmt::format("--heuristic takes one name here, got '{}' (sweep, report and bounds take a "
                            "comma-separated list)",
                            Echo(name)));
  ReplaySettings s;
  s.heuristic = &FindHeuristic(name);
  s.runtime = ParseRuntime(runtime);
  if (overhead_limit) CheckOption(kOverheadLimit, *overhead_limit);
  s.overhead_limit = overhead_limit;
  s.seed = seed;
  return s;
}

std::vector<const HeuristicSpec*> ReplayChoice::Heuristics() const {
  std::vector<const HeuristicSpec*> out;
  for (const std::string& h : heuristics) out.push_back(&FindHeuristic(h));
  return out;
}

}  // namespace dtr::api
