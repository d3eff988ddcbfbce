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
//
// All these rebuilds are deferred: Rematerialized() and the rebuilds after
// it only mark regions stale, and Flush() rebuilds them; it must run before
// any region is read (scores), any storage evicted or any tensor created.
// That gives simrd's values, and rebuilds exactly simrd's set of regions:
//  - Between a computation and the next eviction or creation, storages only
//    become material. A rebuild of region R reads only the storages in R's
//    interior and frontier, and when one of R's interior storages becomes
//    material R is on its frontier and rebuilt again (marked stale again).
//    So R rebuilt at Flush() equals R rebuilt at its last marking by simrd,
//    walk order included.
//  - The frontiers at Flush() name the same regions as simrd's frontiers at
//    each computation, apart from storages that became material meanwhile
//    (whose regions are rebuilt anyway): a path X -> e1 .. ek -> u through
//    storages evicted at u's computation either stays evicted (X is on u's
//    frontier now) or its first rematerialized ej has X on its frontier now;
//    conversely a frontier path now was one then, as nothing was evicted.
//
// Pinned storages are out of the walks where that is exact: an edge to a
// storage pinned by an earlier program step than the one creating the edge
// is dropped, since a pinned storage is material (never walked through) and
// its place on a frontier is never used (no absorb into or of it, no upkeep
// of its regions).
// A stale region whose base is pinned by then is dropped: pinned storages'
// regions are never read (the frontiers of a pinned storage that became
// material are still walked, for the regions they name).
//
// The regions named by frontiers are rebuilt up to 64 at a time in one walk
// (RebuildBatch()): after a rematerialization they overlap heavily (about
// 200 regions of 400 storages each per upkeep step on InceptionV4), so one
// walk in which each storage carries the set of bases reaching it replaces
// 64 walks. Their interiors and frontiers stay in the shared RegionBatch
// (a storage and its set of bases); a region copies its frontier out only
// when an absorb edits it, and adds absorbed storages beside the batch.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "model/trace.h"

namespace dtr {

class Engine;

// The storages one batched rebuild reached (see RebuildBatch()), each with
// the set of the batch's regions (bit i: region i) whose interior (evicted
// storages) or frontier (material ones) holds it. Immutable once built;
// shared by the batch's regions and by copies of the engine.
class RegionBatch {
 public:
  // Whether s is in the interior of the regions in `slot`. After the last
  // Add(); the first call indexes the interior (safe from several threads).
  bool Holds(StorageId s, uint64_t slot) const {
    std::call_once(indexed_, [this] { Index(); });
    const uint32_t mask = static_cast<uint32_t>(index_.size() - 1);
    for (uint32_t h = Hash(s) & mask;; h = (h + 1) & mask) {
      const int32_t i = index_[h];
      if (i < 0) return false;
      if (interior_[i] == s) return (interior_regions_[i] & slot) != 0;
    }
  }
  template <class F>
  void ForEachInterior(uint64_t slot, F&& f) const {
    for (size_t i = 0; i < interior_.size(); ++i)
      if (interior_regions_[i] & slot) f(interior_[i]);
  }
  template <class F>
  void ForEachFrontier(uint64_t slot, F&& f) const {
    for (size_t i = 0; i < frontier_.size(); ++i)
      if (frontier_regions_[i] & slot) f(frontier_[i]);
  }

 private:
  friend class EvictedRegions;  // builds it
  static uint32_t Hash(StorageId s) { return static_cast<uint32_t>(s) * 0x9E3779B1u >> 7; }
  void Index() const;
  std::vector<StorageId> interior_, frontier_;
  std::vector<uint64_t> interior_regions_, frontier_regions_;
  mutable std::once_flag indexed_;
  mutable std::vector<int32_t> index_;  // open addressing into interior_, -1: empty
};

struct Region {
  // The interior is a set in two disjoint parts: the storages `batch` holds
  // for `slot` while batch_interior, and `interior`. The frontier is
  // `batch`'s for `slot` while batch_frontier, else `frontier`.
  std::shared_ptr<const RegionBatch> batch;
  uint64_t slot = 0;
  bool batch_interior = false, batch_frontier = false;
  std::vector<StorageId> interior;  // no duplicates, any order
  std::vector<StorageId> frontier;  // a set: no duplicates, any order
  int64_t compute = 0;
  void Clear() {
    batch.reset();
    slot = 0;
    batch_interior = batch_frontier = false;
    interior.clear();
    frontier.clear();
    compute = 0;
  }
  template <class F>
  void ForEachInterior(F&& f) const {
    if (batch_interior) batch->ForEachInterior(slot, f);
    for (StorageId s : interior) f(s);
  }
  template <class F>
  void ForEachFrontier(F&& f) const {
    if (batch_frontier)
      batch->ForEachFrontier(slot, f);
    else
      for (StorageId s : frontier) f(s);
  }
  // The frontier as the vector `frontier`, to be edited.
  void OwnFrontier() {
    if (!batch_frontier) return;
    batch->ForEachFrontier(slot, [this](StorageId s) { frontier.push_back(s); });
    batch_frontier = false;
  }
};

class EvictedRegions {
 public:
  // Scratch for walks; with `maintain`, the per-storage regions too.
  // `trace` must outlive this object and its copies.
  void Init(const Trace& trace, bool maintain);

  const Region& forward(StorageId s) const { return fwd_[s]; }
  const Region& reverse(StorageId s) const { return rev_[s]; }

  // After `storages` became material again (one computation's outputs).
  void Rematerialized(const Engine& engine, std::span<const StorageId> storages);
  // After s was evicted (material(s) is already false). REQUIRES: Flush()
  // since the last Rematerialized(), before s stopped being material.
  void Evicted(const Engine& engine, StorageId s);
  // Rebuilds the stale regions (see above). Cheap when none is stale.
  void Flush(const Engine& engine) {
    if (!stale_list_.empty()) FlushStale(engine);
  }
  bool has_stale() const { return !stale_list_.empty(); }
  // simrd: Region.rebuild(): the evicted storages reachable from base through
  // evicted storages (interior) and the material storages at its edge (frontier).
  void Rebuild(const Engine& engine, Region& r, StorageId base, bool reverse);

 private:
  void Absorb(const Engine& engine, Region& r, StorageId fs, bool reverse);
  void FlushStale(const Engine& engine);
  // Rebuild() of the regions of up to 64 material bases in one direction, in
  // one walk: each storage reached carries the set of bases reaching it.
  void RebuildBatch(const Engine& engine, std::span<const StorageId> bases, bool reverse);
  void RebuildAll(const Engine& engine, std::span<const StorageId> bases, bool reverse);
  void MarkStale(StorageId s, uint8_t bit) {
    if (stale_[s] == 0) stale_list_.push_back(s);
    stale_[s] |= bit;
  }
  uint32_t NextStamp();
  static constexpr uint8_t kStaleForward = 1, kStaleReverse = 2, kStaleRemat = 4;

  // The trace's storage edges without those to storages pinned before the
  // edge exists (see Init); shared by copies.
  struct Edges {
    StorageAdjacency children, parents;
  };
  std::shared_ptr<const Edges> edges_;  // null when the trace pins nothing
  const StorageAdjacency* children_ = nullptr;  // edges_'s or the trace's
  const StorageAdjacency* parents_ = nullptr;
  std::vector<Region> fwd_, rev_;
  // Scratch: marks stamped per walk, a DFS stack, affected storages.
  std::vector<uint32_t> mark_a_, mark_b_;
  uint32_t stamp_ = 0;
  std::vector<StorageId> dfs_, diff_;
  // Scratch of RebuildBatch(), all zero between batches: per storage, the
  // bases (bit i: bases[i]) reaching it and those not yet passed on to its
  // neighbours; the storages reached; the bases of a batch and of a flush.
  std::vector<uint64_t> reach_, pending_;
  std::vector<StorageId> reached_, batch_, bases_, remat_;
  std::vector<uint64_t> queue_, queue_words_;  // all zero between walks
  struct Run {  // consecutive storages reached by one set of bases
    uint64_t set = 0;
    int64_t compute = 0;
    size_t storages = 0;
    bool frontier = false;
  };
  std::vector<Run> runs_;
  // Stale regions: per storage kStaleForward | kStaleReverse | kStaleRemat
  // (became material: both regions, then those on their frontiers), and the storages with any.
  std::vector<uint8_t> stale_;
  std::vector<StorageId> stale_list_;
};

}  // namespace dtr
