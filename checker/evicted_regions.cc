#include "checker/evicted_regions.h"

#include <algorithm>

#include "checker/engine.h"

namespace dtr {

void EvictedRegions::Init(size_t storages, bool maintain) {
  if (maintain) {
    fwd_.assign(storages, Region{});
    rev_.assign(storages, Region{});
  }
  mark_a_.assign(storages, 0);
  mark_b_.assign(storages, 0);
  stamp_ = 0;
}

uint32_t EvictedRegions::NextStamp() {
  if (++stamp_ == 0) {  // wrapped: old marks could collide with new stamps
    std::fill(mark_a_.begin(), mark_a_.end(), 0);
    std::fill(mark_b_.begin(), mark_b_.end(), 0);
    stamp_ = 1;
  }
  return stamp_;
}

void EvictedRegions::Rebuild(const Engine& engine, Region& r, StorageId base, bool reverse) {
  r.Clear();
  const uint32_t mark = NextStamp();
  dfs_.clear();
  dfs_.push_back(base);
  auto visit = [&](StorageId us) {
    if (engine.material(us)) {
      if (us != base && mark_b_[us] != mark) {
        mark_b_[us] = mark;
        r.frontier.push_back(us);
      }
    } else if (mark_a_[us] != mark) {
      mark_a_[us] = mark;
      r.compute += engine.storage_compute(us);
      r.interior.push_back(us);
      dfs_.push_back(us);
    }
  };
  const Trace& trace = engine.trace();
  const bool v1 = engine.runtime() == RuntimeKind::kV1;
  const TensorId created = engine.tensors_created();
  while (!dfs_.empty()) {
    StorageId s = dfs_.back();
    dfs_.pop_back();
    if (v1) {  // RuntimeV1 edits its lists while banishing: walk them as they are
      for (TensorId t : engine.storage_tensors(s))
        for (TensorId u : reverse ? engine.v1_parents(t) : engine.v1_children(t))
          visit(trace.tensors[u].storage);
    } else {
      const StorageAdjacency& adj = reverse ? trace.storage_parents : trace.storage_children;
      for (const StorageEdge* e = adj.begin(s); e != adj.end(s) && e->key < created; ++e) visit(e->storage);
    }
  }
}

void EvictedRegions::Rematerialized(const Engine& engine, std::span<const StorageId> storages) {
  affected_.clear();
  affected_rev_.clear();
  for (StorageId us : storages) {
    Rebuild(engine, fwd_[us], us, false);
    Rebuild(engine, rev_[us], us, true);
  }
  // Rebuild() moves the stamp; collect the affected sets afterwards.
  const uint32_t mark = NextStamp();
  for (StorageId us : storages) {
    for (StorageId x : rev_[us].frontier)
      if (mark_a_[x] != mark) {
        mark_a_[x] = mark;
        affected_.push_back(x);
      }
    for (StorageId x : fwd_[us].frontier)
      if (mark_b_[x] != mark) {
        mark_b_[x] = mark;
        affected_rev_.push_back(x);
      }
  }
  // A pinned storage stays pinned and is never scored, evicted or absorbed
  // from again, so its regions are never read: skip their upkeep.
  for (StorageId x : affected_)
    if (!engine.pinned(x)) Rebuild(engine, fwd_[x], x, false);
  for (StorageId x : affected_rev_)
    if (!engine.pinned(x)) Rebuild(engine, rev_[x], x, true);
}

void EvictedRegions::Evicted(const Engine& engine, StorageId s) {
  // Copies: Absorb() may edit s's own regions when the storage graph has a cycle.
  std::vector<StorageId> rev_frontier = rev_[s].frontier;
  // Pinned storages' regions are never read again (see Rematerialized).
  for (StorageId ps : rev_frontier)
    if (!engine.pinned(ps)) Absorb(engine, fwd_[ps], s, false);
  std::vector<StorageId> fwd_frontier = fwd_[s].frontier;
  for (StorageId cs : fwd_frontier)
    if (!engine.pinned(cs)) Absorb(engine, rev_[cs], s, true);
  fwd_[s].Clear();
  rev_[s].Clear();
}

// simrd: Region.absorb(): r's frontier storage fs was just evicted; fs joins
// the interior with the interior of its own region, whose frontier joins r's.
// Quirk kept from simrd (optimization/region.py): fs's compute is added even
// if fs is already in the interior, and every compute is the storage's
// current one, not the one it had when the region was built.
void EvictedRegions::Absorb(const Engine& engine, Region& r, StorageId fs, bool reverse) {
  Region& own = reverse ? rev_[fs] : fwd_[fs];
  Region copy;
  const Region& reg = (&own == &r) ? (copy = own, copy) : own;
  auto it = std::find(r.frontier.begin(), r.frontier.end(), fs);
  if (it == r.frontier.end()) engine.SimrdAssertion("an evicted storage is missing from a region frontier");
  *it = r.frontier.back();
  r.frontier.pop_back();
  const uint32_t mark = NextStamp();
  for (StorageId x : r.frontier) mark_a_[x] = mark;
  for (StorageId x : reg.frontier)
    if (mark_a_[x] != mark) {
      mark_a_[x] = mark;
      r.frontier.push_back(x);
    }
  for (StorageId x : r.interior) mark_b_[x] = mark;
  bool fs_in_interior = mark_b_[fs] == mark;
  diff_.clear();
  for (StorageId x : reg.interior)
    if (mark_b_[x] != mark) {
      mark_b_[x] = mark;
      diff_.push_back(x);
    }
  bool fs_in_diff = !fs_in_interior && mark_b_[fs] == mark;
  for (StorageId d : diff_) {
    r.compute += engine.storage_compute(d);
    r.interior.push_back(d);
  }
  if (!fs_in_diff) {
    r.compute += engine.storage_compute(fs);
    if (!fs_in_interior) r.interior.push_back(fs);
  }
}

}  // namespace dtr
