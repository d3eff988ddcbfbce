// simrd's evicted regions (optimization/region.py, as RuntimeV2Optimized
// maintains them): for each material storage, the evicted storages reachable
// from it through evicted storages, forward (children) and reverse
// (parents), their summed compute (the e* of DTR's score), and the material
// storages at their edge (the frontier).
//
// Upkeep is incremental, as in simrd: when storages are rematerialized their
// own regions and those of the storages on their frontiers are rebuilt; when
// a storage is evicted, the regions whose frontier held it absorb it and its
// own region. The values are simrd's, quirks included (see Absorb in the
// .cc); they are never recomputed from scratch where simrd does not.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/trace.h"

namespace dtr {

class Engine;

struct Region {
  std::vector<StorageId> interior;  // a set: no duplicates, any order
  std::vector<StorageId> frontier;  // a set: no duplicates, any order
  int64_t compute = 0;
  void Clear() {
    interior.clear();
    frontier.clear();
    compute = 0;
  }
};

class EvictedRegions {
 public:
  // Scratch for walks; with `maintain`, the per-storage regions too.
  void Init(size_t storages, bool maintain);

  const Region& forward(StorageId s) const { return fwd_[s]; }
  const Region& reverse(StorageId s) const { return rev_[s]; }

  // After `storages` became material again (one computation's outputs).
  void Rematerialized(const Engine& engine, std::span<const StorageId> storages);
  // After s was evicted (material(s) is already false).
  void Evicted(const Engine& engine, StorageId s);
  // simrd: Region.rebuild(): the evicted storages reachable from base through
  // evicted storages (interior) and the material storages at its edge (frontier).
  void Rebuild(const Engine& engine, Region& r, StorageId base, bool reverse);

 private:
  void Absorb(const Engine& engine, Region& r, StorageId fs, bool reverse);
  uint32_t NextStamp();

  std::vector<Region> fwd_, rev_;
  // Scratch: marks stamped per walk, a DFS stack, affected storages.
  std::vector<uint32_t> mark_a_, mark_b_;
  uint32_t stamp_ = 0;
  std::vector<StorageId> dfs_, diff_, affected_, affected_rev_;
};

}  // namespace dtr
