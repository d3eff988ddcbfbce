// The replay settings as a caller names them: heuristic(s), runtime, overhead
// limit and seed, with the CLI's defaults. The CLI's flags and the Python
// module's keywords fill one ReplayChoice; Resolve() checks it and gives the
// settings every library call takes (checker/engine/replay_settings.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/engine/replay_settings.h"

namespace dtr::api {

inline constexpr const char* kDefaultHeuristic = "DTR";
inline constexpr const char* kDefaultRuntime = "RuntimeV2EagerOptimized";

struct ReplayChoice {
  // One entry, or several for the commands that run each (sweep, report,
  // bounds); the first is the one the others run.
  std::vector<std::string> heuristics{kDefaultHeuristic};
  std::string runtime = kDefaultRuntime;
  std::optional<double> overhead_limit;  // none: no limit; else in api::kOverheadLimit
  uint64_t seed = 0;

  const std::string& heuristic() const { return heuristics.at(0); }

  // The settings for `heuristic` (default: the first). Throws Error for an
  // unknown heuristic or runtime ("unknown heuristic 'X' (known: ...)") and
  // for an overhead limit outside the range, with the CLI's messages.
  ReplaySettings Resolve() const;
  ReplaySettings Resolve(const std::string& heuristic) const;
  // The heuristics, each checked.
  std::vector<const HeuristicSpec*> Heuristics() const;
};

}  // namespace dtr::api
