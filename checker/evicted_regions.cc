#include "checker/evicted_regions.h"

#include <algorithm>
#include <bit>
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
    reach_.assign(storages, 0);
    queue_.assign(storages / 64 + 1, 0);
    queue_words_.assign(queue_.size() / 64 + 1, 0);
    pending_.assign(storages, 0);
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
  remat_.clear();
  for (StorageId us : stale_list_)
    if (stale_[us] & kStaleRemat) remat_.push_back(us);
  RebuildAll(engine, remat_, false);
  RebuildAll(engine, remat_, true);
  for (StorageId us : remat_) {  // MarkStale() may grow stale_list_
    rev_[us].ForEachFrontier([this](StorageId x) { MarkStale(x, kStaleForward); });
    fwd_[us].ForEachFrontier([this](StorageId x) { MarkStale(x, kStaleReverse); });
  }
  for (const bool reverse : {false, true}) {
    const uint8_t bit = reverse ? kStaleReverse : kStaleForward;
    bases_.clear();
    // A pinned storage stays pinned and is never scored, evicted or absorbed
    // from again, so its regions are never read: skip their upkeep.
    for (StorageId x : stale_list_)
      if (!(stale_[x] & kStaleRemat) && (stale_[x] & bit) && !engine.pinned(x)) bases_.push_back(x);
    RebuildAll(engine, bases_, reverse);
  }
  for (StorageId x : stale_list_) stale_[x] = 0;
  stale_list_.clear();
}

// Rebuild() of each base's region, 64 at a time in RebuildBatch(). RuntimeV1
// edits its lists while banishing: its regions are walked one by one.
void EvictedRegions::RebuildAll(const Engine& engine, std::span<const StorageId> bases, bool reverse) {
  const bool batch = engine.runtime() != RuntimeKind::kV1;
  batch_.clear();
  auto flush = [&] {
    if (batch_.size() == 1)
      Rebuild(engine, reverse ? rev_[batch_[0]] : fwd_[batch_[0]], batch_[0], reverse);
    else if (!batch_.empty())
      RebuildBatch(engine, batch_, reverse);
    batch_.clear();
  };
  for (StorageId x : bases) {
    if (!batch || !engine.material(x)) {
      Rebuild(engine, reverse ? rev_[x] : fwd_[x], x, reverse);
      continue;
    }
    batch_.push_back(x);
    if (batch_.size() == 64) flush();
  }
  flush();
}

// Rebuild() for each base at once: one walk from all bases, in which a
// storage carries the set of bases reaching it through evicted storages. An
// evicted storage reached from base i is in i's interior, a material one
// (other than base i itself) on i's frontier: the sets Rebuild() finds, and
// the same computes.
//
// Storages are numbered in creation order, parents before children, so the
// walk takes the evicted storages in that order (forward; backward in
// reverse): each passes on all the bases reaching it at once. Where an edge
// goes against that order (a storage graph with a cycle), the storage it
// reaches is queued again and passes on the bases it gained.
void EvictedRegions::RebuildBatch(const Engine& engine, std::span<const StorageId> bases, bool reverse) {
  const StorageAdjacency& adj = reverse ? *parents_ : *children_;
  const TensorId created = engine.tensors_created();
  const uint8_t* material = engine.material_flags();
  // reach_ and pending_ are all zero between batches (see the end).
  reached_.clear();
  // The queue: a bit per storage, set while its new bases await passing on,
  // and a bit per word of it, set while the word has a bit set.
  size_t queued = 0, next = reverse ? 0 : queue_.size();  // next: a word at or before the first queued
  auto pass_on = [&](StorageId from, uint64_t bits) {
    for (const StorageEdge* e = adj.begin(from); e != adj.end(from) && e->key < created; ++e) {
      const StorageId u = e->storage;
      const uint64_t had = reach_[u], fresh = bits & ~had;
      if (fresh == 0) continue;
      if (had == 0) reached_.push_back(u);
      reach_[u] = had | fresh;
      if (material[u]) continue;  // on the frontier: not walked through
      if (pending_[u] == 0) {
        const size_t w = static_cast<size_t>(u) / 64;
        queue_[w] |= uint64_t{1} << (u % 64);
        queue_words_[w / 64] |= uint64_t{1} << (w % 64);
        ++queued;
        next = reverse ? std::max(next, w) : std::min(next, w);
      }
      pending_[u] |= fresh;
    }
  };
  // The first queued word from `next` on (backward in reverse).
  auto first_word = [&] {
    size_t sw = next / 64;
    if (reverse) {
      uint64_t m = queue_words_[sw] & (~uint64_t{0} >> (63 - next % 64));
      while (m == 0) m = queue_words_[--sw];
      return sw * 64 + 63 - std::countl_zero(m);
    }
    uint64_t m = queue_words_[sw] & (~uint64_t{0} << (next % 64));
    while (m == 0) m = queue_words_[++sw];
    return sw * 64 + std::countr_zero(m);
  };
  for (size_t i = 0; i < bases.size(); ++i) pass_on(bases[i], uint64_t{1} << i);
  while (queued > 0) {
    next = first_word();
    uint64_t& word = queue_[next];
    const int bit = reverse ? 63 - std::countl_zero(word) : std::countr_zero(word);
    word &= ~(uint64_t{1} << bit);
    if (word == 0) queue_words_[next / 64] &= ~(uint64_t{1} << (next % 64));
    --queued;
    const StorageId v = static_cast<StorageId>(next * 64 + bit);
    const uint64_t bits = pending_[v];
    pending_[v] = 0;
    pass_on(v, bits);
  }
  // The storages reached go into the batch with their sets of bases. The
  // interiors' computes (and sizes) are summed per run of storages with one
  // set first (the storages past the point where the walks merge), then
  // added to each base of the set.
  auto batch = std::make_shared<RegionBatch>();
  Region* out[64];
  for (size_t i = 0; i < bases.size(); ++i) {
    out[i] = reverse ? &rev_[bases[i]] : &fwd_[bases[i]];
    out[i]->Clear();
    reach_[bases[i]] &= ~(uint64_t{1} << i);  // never on its own frontier
  }
  size_t interior_size = 0, frontier_size = 0;
  for (StorageId u : reached_)
    if (reach_[u] != 0) ++(material[u] ? frontier_size : interior_size);
  batch->interior_.resize(interior_size);
  batch->interior_regions_.resize(interior_size);
  batch->frontier_.resize(frontier_size);
  batch->frontier_regions_.resize(frontier_size);
  StorageId* interior = batch->interior_.data();
  StorageId* frontier = batch->frontier_.data();
  uint64_t* interior_sets = batch->interior_regions_.data();
  uint64_t* frontier_sets = batch->frontier_regions_.data();
  size_t in = 0, fr = 0;
  runs_.clear();
  Run run, frontier_run;
  for (StorageId u : reached_) {
    const uint64_t set = reach_[u];
    reach_[u] = 0;
    if (set == 0) continue;  // a base reached only from itself
    Run& r = material[u] ? frontier_run : run;
    if (set != r.set) {
      if (r.set != 0) runs_.push_back(r);
      r = Run{set, 0, 0, material[u] != 0};
    }
    ++r.storages;
    if (material[u]) {
      frontier[fr] = u;
      frontier_sets[fr++] = set;
    } else {
      interior[in] = u;
      interior_sets[in++] = set;
      r.compute += engine.storage_compute(u);
    }
  }
  for (const Run& r : {run, frontier_run})
    if (r.set != 0) runs_.push_back(r);
  size_t interior_count[64] = {}, frontier_count[64] = {};
  for (const Run& r : runs_)
    for (uint64_t bits = r.set; bits != 0; bits &= bits - 1) {
      const int i = std::countr_zero(bits);
      if (r.frontier) {
        frontier_count[i] += r.storages;
      } else {
        interior_count[i] += r.storages;
        out[i]->compute += r.compute;
      }
    }
  // A region uses the batch's arrays only if it holds at least a quarter of
  // them: reading them then costs at most 4 times its size, and the arrays
  // stay within 4 times the size of the regions keeping them alive. The other
  // regions get their own lists, in one pass over the arrays.
  uint64_t own_interior = 0, own_frontier = 0;
  for (size_t i = 0; i < bases.size(); ++i) {
    if (interior_count[i] * 4 < interior_size) own_interior |= uint64_t{1} << i;
    if (frontier_count[i] * 4 < frontier_size) own_frontier |= uint64_t{1} << i;
  }
  if (own_interior != 0)
    for (size_t k = 0; k < interior_size; ++k)
      for (uint64_t bits = interior_sets[k] & own_interior; bits != 0; bits &= bits - 1)
        out[std::countr_zero(bits)]->interior.push_back(interior[k]);
  if (own_frontier != 0)
    for (size_t k = 0; k < frontier_size; ++k)
      for (uint64_t bits = frontier_sets[k] & own_frontier; bits != 0; bits &= bits - 1)
        out[std::countr_zero(bits)]->frontier.push_back(frontier[k]);
  const uint64_t all = bases.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << bases.size()) - 1;
  if (own_interior == all) {  // no region reads them: free
    batch->interior_ = {};
    batch->interior_regions_ = {};
  }
  if (own_frontier == all) {
    batch->frontier_ = {};
    batch->frontier_regions_ = {};
  }
  for (size_t i = 0; i < bases.size(); ++i) {
    Region& r = *out[i];
    r.slot = uint64_t{1} << i;
    r.batch_interior = !(own_interior & r.slot);
    r.batch_frontier = !(own_frontier & r.slot);
    if (r.batch_interior || r.batch_frontier) r.batch = batch;
  }
}

void EvictedRegions::Evicted(const Engine& engine, StorageId s) {
  // Copies: Absorb() may edit s's own regions when the storage graph has a cycle.
  std::vector<StorageId> frontier;
  rev_[s].ForEachFrontier([&](StorageId x) { frontier.push_back(x); });
  // Pinned storages' regions are never read again (see Rematerialized).
  for (StorageId ps : frontier)
    if (!engine.pinned(ps)) Absorb(engine, fwd_[ps], s, false);
  frontier.clear();
  fwd_[s].ForEachFrontier([&](StorageId x) { frontier.push_back(x); });
  for (StorageId cs : frontier)
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
  r.OwnFrontier();
  auto it = std::find(r.frontier.begin(), r.frontier.end(), fs);
  if (it == r.frontier.end()) engine.SimrdAssertion("an evicted storage is missing from a region frontier");
  *it = r.frontier.back();
  r.frontier.pop_back();
  const uint32_t mark = NextStamp();
  for (StorageId x : r.frontier) mark_a_[x] = mark;
  reg.ForEachFrontier([&](StorageId x) {
    if (mark_a_[x] != mark) {
      mark_a_[x] = mark;
      r.frontier.push_back(x);
    }
  });
  // In r's interior: marked (its own part, then the difference), or in its batch.
  for (StorageId x : r.interior) mark_b_[x] = mark;
  auto in_r = [&](StorageId x) { return mark_b_[x] == mark || (r.batch_interior && r.batch->Holds(x, r.slot)); };
  const bool fs_in_interior = in_r(fs);
  diff_.clear();
  reg.ForEachInterior([&](StorageId x) {
    if (!in_r(x)) {
      mark_b_[x] = mark;
      diff_.push_back(x);
    }
  });
  const bool fs_in_diff = !fs_in_interior && mark_b_[fs] == mark;
  for (StorageId d : diff_) {
    r.compute += engine.storage_compute(d);
    r.interior.push_back(d);
  }
  if (!fs_in_diff) {
    r.compute += engine.storage_compute(fs);
    if (!fs_in_interior) r.interior.push_back(fs);
  }
}

void RegionBatch::Index() const {
  size_t size = 8;
  while (size < 2 * interior_.size()) size *= 2;
  index_.assign(size, -1);
  const uint32_t mask = static_cast<uint32_t>(size - 1);
  for (size_t i = 0; i < interior_.size(); ++i) {
    uint32_t h = Hash(interior_[i]) & mask;
    while (index_[h] >= 0) h = (h + 1) & mask;
    index_[h] = static_cast<int32_t>(i);
  }
}

}  // namespace dtr
