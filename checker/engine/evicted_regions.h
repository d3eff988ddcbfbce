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
// The regions named by frontiers are not walked again: they shrink in place
// (Shrink()) and then grow (Grow()). Their interiors and frontiers are what
// a walk with the edges of the tensors before Region::cutoff would give
// (simrd's quirks touch only the computes), unless Region::walk says
// otherwise: a walk sets them, an absorb adds exactly what became reachable
// (the target takes the lower cutoff), and a region whose interior held a
// rematerialized storage is rebuilt, here shrunk, in the same flush. An
// operator's creation adds edges from its arguments to its outputs, keyed by
// its outputs: Created() lowers the cutoff of the regions holding an
// argument (forward) or an output (reverse) as base or in their interior to
// its first output; no other region reaches them. Growth() follows the
// edges keyed from the cutoff on out of the base and the interior (the
// tensors since the cutoff or each held storage's last edges, whichever are
// fewer), then everything from what they reach: with the shrink, a walk's
// result. What else changes a walk's result is marked for a walk: the
// eviction of a storage whose region misses frontier storages (a marked
// one, or one whose growth finds them) marks theirs (Evicted()), a new
// tensor on an evicted storage marks the regions holding it, whose sum of
// computes a rebuild would change (ComputeChanging()), and an absorb from a
// marked region marks its target. A marked region keeps simrd's (stale)
// contents and is walked at its next rebuild.
// So at a flush an unmarked stale region lost exactly what the storages
// that became material cut off, and gained those of them it reaches and
// what the later edges reach. Shrinking removes the first in storage order
// (parents before children; reversed for reverse regions), so each
// storage's predecessors are settled before it is looked at. A trace whose
// storage edges go against storage order (a cycle) rebuilds regions by
// walks instead, as does RuntimeV1.
//
// Deferred walks. Where regions shrink in place, the forward region of a
// storage that became material is not walked at once: it is marked deferred,
// with the tensors created so far (the edges its walk may use), and walked
// when first needed (Resolve()). Until then the regions a walk would change
// each change it in a way a later walk reproduces: storages that become
// material shrink it (a flush that marks it stale only renews its cutoff,
// like a rebuild), and new edges matter only through its cutoff and walk
// mark. What a later walk would not reproduce resolves it first: the
// eviction of a storage on its frontier (an absorb into it, or a walk mark
// from Evicted()), a change of compute of a storage in its interior, the
// eviction of its base, and every read (ForwardOf()). A score that cannot
// win even without the region's compute does not read it (the policy asks
// forward_deferred()).
// simrd marks stale the reverse region of each storage on the new forward
// region's frontier. Those are the material storages x whose reverse region
// holds the rematerialized storage u (x is on u's forward frontier iff u is
// in x's reverse interior, the regions being exact before this flush), so
// they are found by testing the tracked material storages' reverse regions
// (with their growth, or walking back from those marked for a walk, which
// may miss u).
//
// Regions taken from a neighbour. Where regions are walked at once, a
// rematerialized storage whose forward region would be most of a
// neighbour's takes that neighbour's region instead (Derive(), in the .cc),
// so a chain rematerialized storage by storage hands its released tail on
// rather than walking it once per storage. Those taken are not counted in
// the costs that choose between walking and deferring. (Taking them in
// deferring flushes too made TreeLSTM 0.1 about 10% slower.)
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "checker/engine/storage_set.h"
#include "model/trace.h"

namespace dtr {

class Engine;

struct Region {
  StorageSet interior;  // evicted storages
  StorageSet frontier;  // material storages
  int64_t compute = 0;  // simrd's value (what scores read)
  // The sum of the interior's computes (what a rebuild now would give);
  // differs from `compute` by simrd's absorb quirks. Current unless `walk`.
  int64_t exact = 0;
  // The interior and frontier may differ from a walk's in ways Grow() does
  // not repair (a storage on the frontier evicted without an absorb, a
  // compute changed): walk it at its next rebuild.
  bool walk = false;
  // A forward region not walked yet (see "Deferred walks" above): it is what
  // a walk from its base with the edges of the first `cutoff` tensors gives.
  bool deferred = false;
  // The interior and frontier may miss only what the edges of tensors
  // `cutoff` onwards reach (kAllEdges: nothing), Created() lowering it:
  // a walk now finds them and what those edges reach (Grow()). simrd keeps
  // a region so until its next rebuild.
  static constexpr TensorId kAllEdges = std::numeric_limits<TensorId>::max();
  TensorId cutoff = kAllEdges;
  void Clear() {
    interior.clear();
    frontier.clear();
    compute = exact = 0;
    walk = false;
    deferred = false;
  }
  template <class F>
  void ForEachInterior(F&& f) const {
    interior.ForEach(f);
  }
  template <class F>
  void ForEachFrontier(F&& f) const {
    frontier.ForEach(f);
  }
};

class EvictedRegions {
 public:
  // Scratch for walks; with `maintain`, the per-storage regions too.
  // `trace` must outlive this object and its copies.
  void Init(const Trace& trace, bool maintain);

  // s's forward region, walked first if it was deferred. REQUIRES: Flush().
  const Region& ForwardOf(const Engine& engine, StorageId s) {
    if (fwd_[s].deferred) Resolve(engine, s, -1);
    return fwd_[s];
  }
  bool forward_deferred(StorageId s) const { return fwd_[s].deferred; }
  const Region& reverse(StorageId s) const { return rev_[s]; }

  // After `storages` became material again (one computation's outputs).
  void Rematerialized(const Engine& engine, std::span<const StorageId> storages);
  // After s was evicted (material(s) is already false). REQUIRES: Flush()
  // since the last Rematerialized(), before s stopped being material.
  void Evicted(const Engine& engine, StorageId s);
  // Before the compute of storage s changes (a tensor created on it): the
  // regions holding s are walked at their next rebuild, which sums the new
  // compute. REQUIRES: Flush() since the last Rematerialized().
  void ComputeChanging(const Engine& engine, StorageId s);
  // After operator `op`'s outputs were created, with their edges.
  void Created(const Engine& engine, OpId op);
  // Rebuilds the stale regions (see above). Cheap when none is stale.
  void Flush(const Engine& engine) {
    if (!stale_list_.empty()) FlushStale(engine);
  }
  bool has_stale() const { return !stale_list_.empty(); }
  // simrd: Region.rebuild(): the evicted storages reachable from base through
  // evicted storages (interior) and the material storages at its edge (frontier).
  // With `created` and `also_material` as for Walk().
  void Rebuild(const Engine& engine, Region& r, StorageId base, bool reverse, TensorId created = -1,
               StorageId also_material = -1);
  // The walk of Rebuild() into vectors, in walk order; returns the interior's
  // compute. Through the edges of the first `created` tensors (default: all
  // created so far), with `also_material` (if not -1) taken as material.
  int64_t Walk(const Engine& engine, StorageId base, bool reverse, std::vector<StorageId>& interior,
               std::vector<StorageId>& frontier, TensorId created = -1,
               StorageId also_material = -1);

  // From now on, log every storage whose regions' compute or deferral may
  // change (for Engine::DrainScoreChanges()).
  void TrackChanges();
  // Calls f(s) once for each storage logged since the last call; empties the log.
  template <class F>
  void DrainChanges(F&& f) {
    for (size_t i = 0; i < changes_.size(); ++i) {  // f may log more
      changed_[changes_[i]] = 0;
      f(changes_[i]);
    }
    changes_.clear();
  }

  // Whether stale regions shrink in place (Shrink()): the storage graph is
  // ordered. Otherwise they are walked again.
  bool shrinks_in_place() const { return ordered_; }
  // For tests: after each Shrink(), compare the region with a Rebuild() and
  // throw std::logic_error if they differ. Off by default; process-wide.
  // The same flag compares the storages found for each deferred region's
  // stale marks with its walk's frontier.
  static void set_verify_shrinks(bool on);
  static int64_t verified_shrinks();  // since the process started
  static int64_t verified_growths();  // of those, the ones that grew after shrinking
  // Of those, the ones a racing walk settled; the racing walks given up.
  static int64_t verified_raced_walks();
  static int64_t verified_lost_walks();
  // Forward regions of rematerialized storages taken from a neighbour's
  // (Derive()), each compared with a walk.
  static int64_t verified_derived();
  // When forward regions of rematerialized storages are deferred
  // (process-wide; kWhenCheaper by default). For tests that compare.
  enum class DeferWalks { kWhenCheaper, kAlways, kNever };
  static void set_defer_walks(DeferWalks when);
  // The most storages a walk Derive() counts as small finds (process-wide,
  // kDefaultDeriveWalk by default). For tests on small traces.
  static constexpr size_t kDefaultDeriveWalk = 64;
  static void set_derive_walk(size_t storages);

 private:
  // Walk(), given up (nullopt) once the interior has more than `limit` storages.
  std::optional<int64_t> WalkUpTo(const Engine& engine, StorageId base, bool reverse,
                                  std::vector<StorageId>& interior,
                                  std::vector<StorageId>& frontier, TensorId created,
                                  StorageId also_material, size_t limit);
  // Rebuild(), if the walk finds at most `limit` evicted storages;
  // otherwise false, r unchanged.
  bool RebuildWithin(const Engine& engine, Region& r, StorageId base, bool reverse, size_t limit,
                     TensorId created = -1, StorageId also_material = -1);
  // With `take`, fs's own region is dropped after this absorb: its interior
  // may be moved into r.
  void Absorb(const Engine& engine, Region& r, StorageId fs, bool reverse, bool take);
  void TakeInterior(const Engine& engine, Region& r, Region& reg);
  // Sets the forward regions of some of this flush's rematerialized storages
  // from those of the storages they cut off (see the .cc), marking them
  // kDerived. REQUIRES: their reverse regions rebuilt, the storages on those
  // regions' frontiers marked kStaleForward.
  void Derive(const Engine& engine);
  // What a walk now adds to r, the region of `base` (see Region::cutoff):
  // the storages reached through the edges of tensors r.cutoff onwards, into
  // found_interior_ (evicted) and found_frontier_ (material); returns their
  // compute. r's frontier and interior need not match today's materiality
  // (those of a flush's rematerialized storages may not yet).
  int64_t Growth(const Engine& engine, const Region& r, StorageId base, bool reverse);
  // Adds Growth() to r (REQUIRES: r is up to date apart from later edges,
  // and r.cutoff < tensors created); whether that added anything.
  bool Grow(const Engine& engine, Region& r, StorageId base, bool reverse);

  // Walks s's deferred forward region, with `also_material` (if not -1) taken
  // as material: the storage being evicted.
  void Resolve(const Engine& engine, StorageId s, StorageId also_material);
  // Marks stale the reverse regions of the storages on the frontiers of the
  // deferred forward regions in `deferred`.
  void MarkStaleByReverse(const Engine& engine, std::span<const StorageId> deferred);
  void VerifyStaleMarks(const Engine& engine, std::span<const StorageId> deferred);
  void Untrack(StorageId s);  // s leaves tracked_ (if there)
  void FlushStale(const Engine& engine);
  // Makes the regions' equal blocks one (BlockSharing) once this thread has
  // made kShareEvery blocks since the last pass, half as many as there are
  // storages, and a 64th as many as the block slots the last pass read: a
  // pass reads a flag of every region's sets and the slots of those
  // changed, looks up the blocks made or changed since the last pass, then
  // lets go of the kept blocks no region holds any more. So a block made
  // pays for one lookup and a few reads in order, and at most that 64th of
  // the blocks are copies not yet shared.
  void ShareBlocksIfMany();
  // What Rebuild() would give for r, the region of material `base` that was
  // up to date before the storages in remat_ became material, obtained by
  // removing what they cut off from base and adding those still reached.
  void Shrink(const Engine& engine, Region& r, StorageId base, bool reverse);
  void VerifyShrink(const Engine& engine, const Region& r, StorageId base, bool reverse);
  // Throws std::logic_error unless r.exact is the sum of r's interior's computes now.
  void VerifyExact(const Engine& engine, const Region& r, StorageId base, bool reverse) const;
  // Whether stale regions shrink (ordered_, and not RuntimeV1's edited lists).
  bool Shrinks(const Engine& engine) const;
  // Marks for a walk the forward (reverse: reverse) regions holding s, but
  // not those of the storages in `skip`.
  // Deferred forward regions among them are resolved first, with
  // `also_material` taken as material.
  void MarkForWalk(const Engine& engine, StorageId s, bool reverse,
                   const StorageSet* skip = nullptr, StorageId also_material = -1);
  // The same for the regions of the storages in found_frontier_.
  void MarkFoundForWalk(const Engine& engine, bool reverse, const StorageSet* skip,
                        StorageId also_material);
  void MarkStale(StorageId s, uint8_t bit) {
    if (stale_[s] == 0) stale_list_.push_back(s);
    stale_[s] |= bit;
  }
  uint32_t NextStamp();
  void NoteChanged(StorageId s) {
    if (track_changes_ && !changed_[s]) {
      changed_[s] = 1;
      changes_.push_back(s);
    }
  }
  static constexpr uint8_t kStaleForward = 1, kStaleReverse = 2, kStaleRemat = 4;
  // Within FlushStale(): a rematerialized storage's forward region was set by
  // Derive(); a storage was looked at as a donor by Derive().
  static constexpr uint8_t kDerived = 8, kDonorTried = 16;

  // The trace's storage edges without those to storages pinned before the
  // edge exists (see Init), and their transposes (an edge u -> v of
  // `children` is v -> u in `into_children`); shared by copies.
  struct Edges {
    StorageAdjacency children, parents, into_children, into_parents;
  };
  std::shared_ptr<const Edges> edges_;          // null when the trace pins nothing
  const StorageAdjacency* children_ = nullptr;  // edges_'s or the trace's
  const StorageAdjacency* parents_ = nullptr;
  const StorageAdjacency* into_children_ = nullptr;
  const StorageAdjacency* into_parents_ = nullptr;
  bool ordered_ = false;  // every edge of children_ goes to a later storage: Shrink() applies
  std::vector<Region> fwd_, rev_;
  // Scratch: marks stamped per walk, a DFS stack, the bases of a
  // flush, its rematerialized storages, what a walk found.
  std::vector<uint32_t> mark_a_, mark_b_;
  uint32_t stamp_ = 0;
  std::vector<StorageId> dfs_, bases_, remat_, found_interior_, found_frontier_;
  StorageQueue queue_;  // storages Shrink() is to look at
  static constexpr size_t kFirstRace = 64;  // see Shrink()
  // Derive(): flushes that rematerialize more storages walk them all.
  static constexpr size_t kDeriveMaxRemat = 64;
  std::vector<StorageId> cut_;  // scratch of Derive()
  // Stale regions: per storage kStaleForward | kStaleReverse | kStaleRemat
  // (became material: both regions, then those on their frontiers), and the storages with any.
  std::vector<uint8_t> stale_;
  std::vector<StorageId> stale_list_;
  // Material storages that became so through Rematerialized() and may have
  // regions (pinned ones are dropped when met), with each one's index here
  // (-1: not tracked).
  std::vector<StorageId> tracked_;
  std::vector<int32_t> tracked_at_;
  std::vector<StorageId> deferred_, marked_;  // scratch of a flush, of MarkForWalk()
  // Whether to defer (FlushStale()): the cost per rematerialized storage of
  // walking its forward region at once and of deferring it, lately (both
  // totals halve once 256 storages are counted).
  struct RecentCost {
    double cost = 0, count = 0;
    double total = 0;  // every cost added, never halved
    void Add(double c, double n) {
      cost += c;
      count += n;
      total += c;
      if (count > 256) cost /= 2, count /= 2;
    }
    double mean() const { return count == 0 ? 0 : cost / count; }
  };
  RecentCost walked_cost_, deferred_cost_;
  double spent() const { return walked_cost_.total + deferred_cost_.total; }
  // The change log (see TrackChanges()): storages, and a flag per storage.
  bool track_changes_ = false;
  std::vector<StorageId> changes_;
  std::vector<uint8_t> changed_;
  // The probe of the other choice (see FlushStale()): which was cheaper at
  // the last flush, the flushes since the last probe, and the period.
  static constexpr int32_t kFirstProbePeriod = 16, kLastProbePeriod = 1024;
  bool defer_cheaper_ = false;
  int32_t since_probe_ = 0, probe_period_ = kFirstProbePeriod;
  // No probe before spent() reaches this: its value after the last probe
  // plus what that probe cost (as measured above).
  double probe_after_ = 0;
  // ShareBlocksIfMany(): the blocks kept, and StorageSet::blocks_made()
  // after the last pass.
  static constexpr uint64_t kShareEvery = uint64_t{1} << 15;
  BlockSharing sharing_;
  uint64_t made_at_sharing_ = 0, pass_slots_ = 0;
};

}  // namespace dtr
