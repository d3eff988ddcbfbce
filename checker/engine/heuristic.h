// The eviction heuristics of simrd (heuristic/dtr.py, etc.py, ablation.py),
// described as data: which cost term a score divides, whether it divides by
// the storage size and by staleness, and which runtime features it needs.
// The replay evaluates them; this file only names and describes them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dtr {

enum class CostTerm {
  kRegions,         // s.compute + forward and reverse evicted-region compute (e*)
  kReverseRegion,   // s.compute + reverse evicted-region compute (MSPS)
  kEqClass,         // s.compute + the distinct equivalence classes of evicted neighbours
  kLocal,           // s.compute
  kUnoptimized,     // s.compute + evicted neighbourhood rebuilt from scratch (DTRUnopt)
  kOne,             // the constant 1 (size- or staleness-only scores)
  kLastAccess,      // LRU: the score is the last access time itself
  kRandom,          // RandomStorage: a uniformly random pool member
};

enum Feature : unsigned {
  kFeatureRegions = 1u << 0,
  kFeatureEqClass = 1u << 1,
  kFeatureLastAccess = 1u << 2,  // simrd's 'last_access_int'
};

struct HeuristicSpec {
  std::string_view name;  // simrd's class name
  CostTerm cost;
  bool divide_by_size;
  bool divide_by_staleness;
  unsigned features;
  std::string_view formula;  // for humans: what the score is
};

// All heuristics in simrd's registration order; throws Error for an unknown name.
const std::vector<HeuristicSpec>& AllHeuristics();
const HeuristicSpec& FindHeuristic(std::string_view name);
// The sixteen ablations (AbESizeStale ... AbRandom).
std::vector<std::string_view> AblationNames();

}  // namespace dtr
