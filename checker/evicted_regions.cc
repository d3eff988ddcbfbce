#include "checker/evicted_regions.h"

#include <algorithm>
#include <limits>

#include "checker/engine.h"

namespace dtr {

namespace {

// adj without the edges to storages pinned at a program step before the one
// that creates the edge's key.
StorageAdjacency WithoutPinnedEdges(const Trace& trace, const StorageAdjacency& adj,
                                    const std::vector<int32_t>& pin_step, const std::vector<int32_t>& create_step) {
  StorageAdjacency out;
  const size_t n = trace.storages.size();
  out.offset.assign(n + 1, 0);
  out.edges.reserve(adj.edges.size());
  for (size_t s = 0; s < n; ++s) {
    for (const StorageEdge* e = adj.begin(static_cast<StorageId>(s)); e != adj.end(static_cast<StorageId>(s)); ++e)
      if (!(pin_step[e->storage] < create_step[trace.tensors[e->key].op])) out.edges.push_back(*e);
    out.offset[s + 1] = static_cast<int32_t>(out.edges.size());
  }
  return out;
}

}  // namespace

void EvictedRegions::Init(const Trace& trace, bool maintain) {
  const size_t storages = trace.storages.size();
  if (maintain) {
    fwd_.assign(storages, Region{});
    rev_.assign(storages, Region{});
    stale_.assign(storages, 0);
  }
  stale_list_.clear();
  mark_a_.assign(storages, 0);
  mark_b_.assign(storages, 0);
  stamp_ = 0;
  // Program step of each storage's first pin, and of each operator's computation.
  constexpr int32_t kNever = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> pin_step(storages, kNever), create_step(trace.ops.size(), kNever);
  bool any_pin = false;
  for (size_t i = 0; i < trace.program.size(); ++i) {
    const Step& st = trace.program[i];
    const int32_t step = static_cast<int32_t>(i);
    if (st.kind == StepKind::kCompute) {
      create_step[st.target] = std::min(create_step[st.target], step);
    } else if (st.kind == StepKind::kPin) {
      int32_t& p = pin_step[trace.tensors[st.target].storage];
      p = std::min(p, step);
      any_pin = true;
    }
  }
  children_ = &trace.storage_children;
  parents_ = &trace.storage_parents;
  edges_.reset();
  if (any_pin) {
    auto edges = std::make_shared<Edges>();
    edges->children = WithoutPinnedEdges(trace, trace.storage_children, pin_step, create_step);
    edges->parents = WithoutPinnedEdges(trace, trace.storage_parents, pin_step, create_step);
    children_ = &edges->children;
    parents_ = &edges->parents;
    edges_ = std::move(edges);
  }
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
      const StorageAdjacency& adj = reverse ? *parents_ : *children_;
      for (const StorageEdge* e = adj.begin(s); e != adj.end(s) && e->key < created; ++e) visit(e->storage);
    }
  }
}

void EvictedRegions::Rematerialized(const Engine&, std::span<const StorageId> storages) {
  for (StorageId us : storages) MarkStale(us, kStaleRemat);
}

// simrd, after each computation: rebuild both regions of each storage that
// became material, then the forward region of each storage on their reverse
// frontiers and the reverse region of each storage on their forward
// frontiers. Done here for all computations since the last flush at once:
// see the header for why that gives simrd's values and rebuilds.
void EvictedRegions::FlushStale(const Engine& engine) {
  const size_t rematerialized = stale_list_.size();
  for (size_t i = 0; i < rematerialized; ++i) {
    const StorageId us = stale_list_[i];
    if (!(stale_[us] & kStaleRemat)) continue;
    Rebuild(engine, fwd_[us], us, false);
    Rebuild(engine, rev_[us], us, true);
    for (StorageId x : rev_[us].frontier) MarkStale(x, kStaleForward);  // may grow stale_list_
    for (StorageId x : fwd_[us].frontier) MarkStale(x, kStaleReverse);
  }
  for (StorageId x : stale_list_) {
    const uint8_t bits = stale_[x];
    stale_[x] = 0;
    if (bits & kStaleRemat) continue;  // both rebuilt above
    // A pinned storage stays pinned and is never scored, evicted or absorbed
    // from again, so its regions are never read: skip their upkeep.
    if (engine.pinned(x)) continue;
    if (bits & kStaleForward) Rebuild(engine, fwd_[x], x, false);
    if (bits & kStaleReverse) Rebuild(engine, rev_[x], x, true);
  }
  stale_list_.clear();
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
  fwd_[s] = Region{};  // release the memory: an evicted storage has no regions
  rev_[s] = Region{};
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
