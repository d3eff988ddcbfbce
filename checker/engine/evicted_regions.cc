#include "checker/engine/evicted_regions.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "checker/engine/engine.h"

namespace dtr {

namespace {

// adj without the edges to storages pinned at a program step before the one
// that creates the edge's key.
StorageAdjacency WithoutPinnedEdges(const Trace& trace, const StorageAdjacency& adj,
                                    const std::vector<int32_t>& pin_step,
                                    const std::vector<int32_t>& create_step) {
  StorageAdjacency out;
  const size_t n = trace.storages.size();
  out.offset.assign(n + 1, 0);
  out.edges.reserve(adj.edges.size());
  for (size_t s = 0; s < n; ++s) {
    for (const StorageEdge* e = adj.begin(static_cast<StorageId>(s));
         e != adj.end(static_cast<StorageId>(s)); ++e)
      if (!(pin_step[e->storage] < create_step[trace.tensors[e->key].op])) out.edges.push_back(*e);
    out.offset[s + 1] = static_cast<int32_t>(out.edges.size());
  }
  return out;
}

// adj's transpose, each list sorted by key like adj's.
StorageAdjacency Transpose(const StorageAdjacency& adj) {
  const size_t n = adj.offset.size() - 1;
  StorageAdjacency out;
  out.offset.assign(n + 1, 0);
  for (const StorageEdge& e : adj.edges) ++out.offset[e.storage + 1];
  for (size_t s = 0; s < n; ++s) out.offset[s + 1] += out.offset[s];
  out.edges.resize(adj.edges.size());
  std::vector<int32_t> next(out.offset.begin(), out.offset.end() - 1);
  for (size_t s = 0; s < n; ++s)
    for (const StorageEdge* e = adj.begin(static_cast<StorageId>(s));
         e != adj.end(static_cast<StorageId>(s)); ++e)
      out.edges[next[e->storage]++] = {e->key, static_cast<StorageId>(s)};
  for (size_t s = 0; s < n; ++s)
    std::sort(out.edges.begin() + out.offset[s], out.edges.begin() + out.offset[s + 1],
              [](const StorageEdge& a, const StorageEdge& b) { return a.key < b.key; });
  return out;
}

std::atomic<bool> g_verify_shrinks{false};
std::atomic<int64_t> g_verified_shrinks{0};
std::atomic<int64_t> g_verified_growths{0};
std::atomic<int64_t> g_verified_raced_walks{0};
std::atomic<int64_t> g_verified_lost_walks{0};
std::atomic<int64_t> g_verified_derived{0};
std::atomic<size_t> g_derive_walk{EvictedRegions::kDefaultDeriveWalk};
std::atomic<EvictedRegions::DeferWalks> g_defer_walks{EvictedRegions::DeferWalks::kWhenCheaper};

}  // namespace

void EvictedRegions::set_verify_shrinks(bool on) {
  g_verify_shrinks.store(on, std::memory_order_relaxed);
}
int64_t EvictedRegions::verified_shrinks() { return g_verified_shrinks.load(); }
int64_t EvictedRegions::verified_growths() { return g_verified_growths.load(); }
int64_t EvictedRegions::verified_raced_walks() { return g_verified_raced_walks.load(); }
int64_t EvictedRegions::verified_lost_walks() { return g_verified_lost_walks.load(); }
int64_t EvictedRegions::verified_derived() { return g_verified_derived.load(); }
void EvictedRegions::set_defer_walks(DeferWalks when) {
  g_defer_walks.store(when, std::memory_order_relaxed);
}
void EvictedRegions::set_derive_walk(size_t storages) {
  g_derive_walk.store(storages, std::memory_order_relaxed);
}

void EvictedRegions::Init(const Trace& trace, bool maintain) {
  const size_t storages = trace.storages.size();
  if (maintain) {
    fwd_.assign(storages, Region{});
    rev_.assign(storages, Region{});
    stale_.assign(storages, 0);
    queue_.Init(storages);
    tracked_.clear();
    tracked_at_.assign(storages, -1);
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
  // Unfiltered, each list is the other's transpose (trace.h).
  children_ = into_parents_ = &trace.storage_children;
  parents_ = into_children_ = &trace.storage_parents;
  edges_.reset();
  if (any_pin) {
    auto edges = std::make_shared<Edges>();
    edges->children = WithoutPinnedEdges(trace, trace.storage_children, pin_step, create_step);
    edges->parents = WithoutPinnedEdges(trace, trace.storage_parents, pin_step, create_step);
    edges->into_children = Transpose(edges->children);
    edges->into_parents = Transpose(edges->parents);
    children_ = &edges->children;
    parents_ = &edges->parents;
    into_children_ = &edges->into_children;
    into_parents_ = &edges->into_parents;
    edges_ = std::move(edges);
  }
  ordered_ = true;
  for (size_t s = 0; s < storages && ordered_; ++s)
    for (const StorageEdge* e = children_->begin(static_cast<StorageId>(s));
         e != children_->end(static_cast<StorageId>(s)); ++e)
      if (e->storage <= static_cast<StorageId>(s)) ordered_ = false;
}

void EvictedRegions::TrackChanges() {
  track_changes_ = true;
  changed_.assign(mark_a_.size(), 0);
  changes_.clear();
}

uint32_t EvictedRegions::NextStamp() {
  if (++stamp_ == 0) {  // wrapped: old marks could collide with new stamps
    std::fill(mark_a_.begin(), mark_a_.end(), 0);
    std::fill(mark_b_.begin(), mark_b_.end(), 0);
    stamp_ = 1;
  }
  return stamp_;
}

void EvictedRegions::Rebuild(const Engine& engine, Region& r, StorageId base, bool reverse,
                             TensorId created, StorageId also_material) {
  RebuildWithin(engine, r, base, reverse, std::numeric_limits<size_t>::max(), created,
                also_material);
}

bool EvictedRegions::RebuildWithin(const Engine& engine, Region& r, StorageId base, bool reverse,
                                   size_t limit, TensorId created, StorageId also_material) {
  const std::optional<int64_t> compute = WalkUpTo(engine, base, reverse, found_interior_,
                                                  found_frontier_, created, also_material, limit);
  if (!compute) return false;
  r.Clear();
  r.compute = r.exact = *compute;
  r.cutoff = created < 0 || created >= engine.tensors_created() ? Region::kAllEdges : created;
  r.interior.assign(found_interior_);
  r.frontier.assign(found_frontier_);
  return true;
}

// Every edge has its key's storage as child (trace.h): the edges of tensors
// [r.cutoff, created) are those into the storages of those tensors.
int64_t EvictedRegions::Growth(const Engine& engine, const Region& r, StorageId base,
                               bool reverse) {
  const Trace& trace = engine.trace();
  const TensorId created = engine.tensors_created();
  const uint32_t mark = NextStamp();
  int64_t compute = 0;
  found_interior_.clear();
  found_frontier_.clear();
  dfs_.clear();
  auto holds = [&](StorageId v) {
    return v == base || mark_a_[v] == mark || r.interior.contains(v);
  };
  auto visit = [&](StorageId v) {
    if (v == base) return;
    if (engine.material(v)) {
      if (mark_b_[v] != mark && !r.frontier.contains(v) && !r.interior.contains(v)) {
        mark_b_[v] = mark;
        found_frontier_.push_back(v);
      }
    } else if (mark_a_[v] != mark && !r.interior.contains(v)) {
      mark_a_[v] = mark;
      compute += engine.storage_compute(v);
      found_interior_.push_back(v);
      dfs_.push_back(v);
    }
  };
  // The later edges out of the base and the interior: those of the tensors
  // since the cutoff (each edge is keyed by a tensor of its child q: forward,
  // into q from a held parent; reverse, out of a held q to its parents), or
  // the last edges of each held storage, whichever are fewer.
  const StorageAdjacency& adj = reverse ? *parents_ : *children_;
  if (created - r.cutoff <= static_cast<int64_t>(r.interior.size())) {
    const StorageAdjacency& into_q = reverse ? *parents_ : *into_children_;
    for (TensorId t = r.cutoff; t < created; ++t) {
      const StorageId q = trace.tensors[t].storage;
      const StorageEdge* first = into_q.begin(q);
      for (const StorageEdge* e = into_q.end(q); e != first && (--e)->key >= t;) {
        if (e->key != t) continue;
        if (reverse) {
          if (holds(q)) visit(e->storage);
        } else if (holds(e->storage)) {
          visit(q);
        }
      }
    }
  } else {
    auto later_edges = [&](StorageId v) {
      const StorageEdge* first = adj.begin(v);
      for (const StorageEdge* e = adj.end(v); e != first && (--e)->key >= r.cutoff;)
        if (e->key < created) visit(e->storage);
    };
    later_edges(base);
    r.interior.ForEach(later_edges);
  }
  while (!dfs_.empty()) {
    const StorageId v = dfs_.back();
    dfs_.pop_back();
    for (const StorageEdge* e = adj.begin(v); e != adj.end(v) && e->key < created; ++e)
      visit(e->storage);
  }
  return compute;
}

bool EvictedRegions::Grow(const Engine& engine, Region& r, StorageId base, bool reverse) {
  const int64_t compute = Growth(engine, r, base, reverse);
  const bool grew = !found_interior_.empty() || !found_frontier_.empty();
  for (StorageId v : found_interior_) r.interior.insert(v);
  for (StorageId v : found_frontier_) r.frontier.insert(v);
  r.exact += compute;
  r.compute = r.exact;
  r.cutoff = Region::kAllEdges;
  return grew;
}

int64_t EvictedRegions::Walk(const Engine& engine, StorageId base, bool reverse,
                             std::vector<StorageId>& interior, std::vector<StorageId>& frontier,
                             TensorId created, StorageId also_material) {
  return *WalkUpTo(engine, base, reverse, interior, frontier, created, also_material,
                   std::numeric_limits<size_t>::max());
}

std::optional<int64_t> EvictedRegions::WalkUpTo(const Engine& engine, StorageId base, bool reverse,
                                                std::vector<StorageId>& interior,
                                                std::vector<StorageId>& frontier, TensorId created,
                                                StorageId also_material, size_t limit) {
  int64_t compute = 0;
  const uint32_t mark = NextStamp();
  interior.clear();
  frontier.clear();
  dfs_.clear();
  dfs_.push_back(base);
  auto visit = [&](StorageId us) {
    if (engine.material(us) || us == also_material) {
      if (us != base && mark_b_[us] != mark) {
        mark_b_[us] = mark;
        frontier.push_back(us);
      }
    } else if (mark_a_[us] != mark) {
      mark_a_[us] = mark;
      compute += engine.storage_compute(us);
      interior.push_back(us);
      dfs_.push_back(us);
    }
  };
  const Trace& trace = engine.trace();
  const bool v1 = engine.runtime() == RuntimeKind::kV1;
  if (created < 0) created = engine.tensors_created();
  while (!dfs_.empty()) {
    if (interior.size() > limit) return std::nullopt;
    StorageId s = dfs_.back();
    dfs_.pop_back();
    if (v1) {  // RuntimeV1 edits its lists while banishing: walk them as they are
      for (TensorId t : engine.storage_tensors(s))
        for (TensorId u : reverse ? engine.v1_parents(t) : engine.v1_children(t))
          visit(trace.tensors[u].storage);
    } else {
      const StorageAdjacency& adj = reverse ? *parents_ : *children_;
      for (const StorageEdge* e = adj.begin(s); e != adj.end(s) && e->key < created; ++e)
        visit(e->storage);
    }
  }
  return compute;
}

void EvictedRegions::Rematerialized(const Engine&, std::span<const StorageId> storages) {
  for (StorageId us : storages) {
    MarkStale(us, kStaleRemat);
    if (tracked_at_[us] < 0) {
      tracked_at_[us] = static_cast<int32_t>(tracked_.size());
      tracked_.push_back(us);
    }
  }
}

void EvictedRegions::Untrack(StorageId s) {
  const int32_t i = tracked_at_[s];
  if (i < 0) return;
  tracked_[i] = tracked_.back();
  tracked_at_[tracked_[i]] = i;
  tracked_.pop_back();
  tracked_at_[s] = -1;
}

void EvictedRegions::Resolve(const Engine& engine, StorageId s, StorageId also_material) {
  NoteChanged(s);
  Region& r = fwd_[s];
  const bool walk = r.walk;
  Rebuild(engine, r, s, false, r.cutoff, also_material);
  r.walk = walk;
  deferred_cost_.Add(static_cast<double>(found_interior_.size()), 0);
}

void EvictedRegions::MarkStaleByReverse(const Engine& engine,
                                        std::span<const StorageId> deferred) {
  const TensorId created = engine.tensors_created();
  auto is_deferred = [&](StorageId u) {
    return std::find(deferred.begin(), deferred.end(), u) != deferred.end();
  };
  marked_.clear();
  for (size_t i = 0; i < tracked_.size();) {
    const StorageId x = tracked_[i];
    if (engine.pinned(x)) {  // pinned for good: its regions are never read
      Untrack(x);
      continue;
    }
    ++i;
    Region& r = rev_[x];
    // x is on the frontier of a deferred u iff a path from u reaches x
    // through storages evicted before this flush (the regions being up to
    // date before it, apart from later edges and walk marks).
    const bool later = r.walk || r.cutoff < created;
    if (!later && r.interior.empty()) continue;
    bool holds = false;  // a plain loop: GCC would not inline any_of's predicate here
    for (StorageId u : deferred)
      if (r.interior.contains(u)) {
        holds = true;
        break;
      }
    if (holds) {
      marked_.push_back(x);
      continue;
    }
    if (!later) continue;
    // A path that is not in the interior leaves it through a later edge:
    // Growth() follows those. A region marked for a walk may miss more (but
    // holds nothing a walk would not find): walk back from x now. Both take
    // the storages of this flush as material, as they are now.
    if (r.walk) {
      Walk(engine, x, true, found_interior_, found_frontier_);
    } else {
      Growth(engine, r, x, true);
      // Nothing new: the later edges reach only what r holds.
      if (found_interior_.empty() && found_frontier_.empty()) r.cutoff = Region::kAllEdges;
    }
    deferred_cost_.Add(static_cast<double>(found_interior_.size()), 0);
    if (std::any_of(found_frontier_.begin(), found_frontier_.end(), is_deferred))
      marked_.push_back(x);
  }
  for (StorageId x : marked_) MarkStale(x, kStaleReverse);
}

void EvictedRegions::VerifyStaleMarks(const Engine& engine, std::span<const StorageId> deferred) {
  std::vector<StorageId> on_frontiers;
  for (StorageId u : deferred) {
    Walk(engine, u, false, found_interior_, found_frontier_);
    for (StorageId x : found_frontier_)
      if (!engine.pinned(x) && !(stale_[x] & (kStaleReverse | kStaleRemat)))
        throw std::logic_error("evicted regions: the deferred forward region of storage " +
                               std::to_string(u) + " has storage " + std::to_string(x) +
                               " on its frontier, whose reverse region was not marked stale");
    on_frontiers.insert(on_frontiers.end(), found_frontier_.begin(), found_frontier_.end());
  }
  for (StorageId x : marked_) {
    if (std::find(on_frontiers.begin(), on_frontiers.end(), x) == on_frontiers.end())
      throw std::logic_error("evicted regions: storage " + std::to_string(x) +
                             " was marked stale but is on no deferred region's frontier");
  }
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
  const bool shrink = Shrinks(engine);
  // Deferring costs a pass over the tracked storages' reverse regions and
  // the walks of the regions resolved later; walking at once costs the
  // walks now. Both are measured (in storages looked at, a pass costing
  // about half a walk's step per storage), and the cheaper is taken
  // (TreeLSTM 0.1: about 110 tracked storages against walks of 880;
  // generated resnet 10^5: 13,900 against 0). The other choice is still
  // tried now and then to keep its cost measured: every 16th flush with
  // rematerialized storages at first, the period doubling (up to 1,024)
  // while the cheaper choice stays the same, back to 16 when it changes.
  // A probe can cost much more than it measures (always deferring is 9x
  // slower than never on unroll_gan 0.3, always walking 1.6x slower than
  // always deferring on TreeLSTM 0.1): a fixed 1-in-16 probe made
  // unroll_gan 0.3 1.5x slower than never deferring (docs/speed.md).
  // A probe also waits until the cheaper choice has cost, since the last
  // probe, as much as that probe did: a deferring probe's pass grows with
  // the tracked storages, and on the generated chain of 10^6 operators one
  // every 1,024 flushes was a quarter of the run (a pass over 138,000
  // storages against walks of a few).
  const DeferWalks when = g_defer_walks.load(std::memory_order_relaxed);
  bool defer = shrink && !remat_.empty() && when == DeferWalks::kAlways;
  bool probe = false;
  if (shrink && !remat_.empty() && when == DeferWalks::kWhenCheaper) {
    const bool cheaper = deferred_cost_.mean() < walked_cost_.mean();
    if (cheaper != defer_cheaper_) probe_period_ = kFirstProbePeriod;
    defer_cheaper_ = cheaper;
    defer = cheaper;
    if (++since_probe_ >= probe_period_ && spent() >= probe_after_) {
      since_probe_ = 0;
      probe_period_ = std::min(2 * probe_period_, kLastProbePeriod);
      defer = !cheaper;
      probe = true;
    }
  }
  const double spent_before = spent();  // what this flush costs, for a probe
  deferred_.clear();
  for (StorageId us : remat_) {
    NoteChanged(us);
    Rebuild(engine, rev_[us], us, true);
  }
  for (StorageId us : remat_)  // MarkStale() may grow stale_list_
    rev_[us].ForEachFrontier([this](StorageId x) { MarkStale(x, kStaleForward); });
  if (!defer && shrink && remat_.size() <= kDeriveMaxRemat) Derive(engine);
  for (StorageId us : remat_) {
    if (stale_[us] & kDerived) continue;
    if (defer) {
      fwd_[us].Clear();
      fwd_[us].deferred = true;
      fwd_[us].cutoff = engine.tensors_created();
      deferred_.push_back(us);
    } else {
      Rebuild(engine, fwd_[us], us, false);
      walked_cost_.Add(static_cast<double>(fwd_[us].interior.size()), 1);
    }
  }
  if (!deferred_.empty()) {
    MarkStaleByReverse(engine, deferred_);
    deferred_cost_.Add(0.5 * static_cast<double>(tracked_.size()),
                       static_cast<double>(deferred_.size()));
  }
  if (probe) probe_after_ = spent() + (spent() - spent_before);
  if (!deferred_.empty() && g_verify_shrinks.load(std::memory_order_relaxed))
    VerifyStaleMarks(engine, deferred_);
  for (StorageId us : remat_)
    if (!fwd_[us].deferred)
      fwd_[us].ForEachFrontier([this](StorageId x) { MarkStale(x, kStaleReverse); });
  for (const bool reverse : {false, true}) {
    const uint8_t bit = reverse ? kStaleReverse : kStaleForward;
    bases_.clear();
    // A pinned storage stays pinned and is never scored, evicted or absorbed
    // from again, so its regions are never read: skip their upkeep.
    for (StorageId x : stale_list_)
      if (!(stale_[x] & kStaleRemat) && (stale_[x] & bit) && !engine.pinned(x)) bases_.push_back(x);
    for (StorageId x : bases_) {
      NoteChanged(x);
      Region& r = reverse ? rev_[x] : fwd_[x];
      if (r.deferred) {  // as a rebuild would: walked later with today's edges
        r.cutoff = engine.tensors_created();
        r.walk = false;
      } else if (shrink && !r.walk) {
        Shrink(engine, r, x, reverse);
        const bool grew = r.cutoff < engine.tensors_created() && Grow(engine, r, x, reverse);
        if (g_verify_shrinks.load(std::memory_order_relaxed)) {
          VerifyShrink(engine, r, x, reverse);
          if (grew) ++g_verified_growths;
        }
      } else {
        Rebuild(engine, r, x, reverse);
      }
    }
  }
  for (StorageId x : stale_list_) stale_[x] = 0;
  stale_list_.clear();
}

// The forward region of a rematerialized storage taken from a neighbour's.
// Let x be a material storage on the reverse frontier of one of this flush's
// rematerialized storages (so x's forward region R is rebuilt in this flush),
// R neither deferred nor marked for a walk, and S the rematerialized storages
// in R's interior. Each storage of R's interior was reached from x along a
// path inside R's interior (walks, absorbs, shrinks and growths keep that),
// so each one left evicted, T, is in x's new region or in that of the last
// storage of S on such a path: T is the union of those walks. When all but
// one of them (x's own and those of S) are small, the large one, u's, is T
// less the storages of the small ones that u does not reach, which are found
// in storage order (each one's parents settled first). u's frontier is what
// of R's frontier and S an edge from u or its interior reaches; its compute
// R's exact sum less what left. R held what a walk with the edges before its
// cutoff finds, and so does u's region (u's edges into T lead where R's did):
// Grow() adds the later edges. x's region is then its small walk, which its
// shrink later in the flush leaves unchanged. A long chain being
// rematerialized hands the whole released tail on this way, storage by
// storage, instead of walking it each time.
void EvictedRegions::Derive(const Engine& engine) {
  const TensorId created = engine.tensors_created();
  const size_t small = g_derive_walk.load(std::memory_order_relaxed);
  for (StorageId first : remat_) {
    rev_[first].ForEachFrontier([&](StorageId x) {
      if ((stale_[x] & (kStaleRemat | kDonorTried)) || engine.pinned(x)) return;
      stale_[x] |= kDonorTried;  // on a reverse frontier: listed stale
      const Region& r = fwd_[x];
      if (r.deferred || r.walk || r.interior.size() <= 8 * small) return;  // little to gain
      // The small walks' interiors into cut_, and the large one.
      cut_.clear();
      StorageId u = -1;
      for (StorageId s : remat_) {
        if (!r.interior.contains(s)) continue;
        if (!WalkUpTo(engine, s, false, found_interior_, found_frontier_, -1, -1, small)) {
          if (u >= 0) return;
          u = s;
          continue;
        }
        cut_.insert(cut_.end(), found_interior_.begin(), found_interior_.end());
      }
      if (u < 0 || (stale_[u] & kDerived)) return;
      Region taken;
      std::swap(taken, fwd_[x]);
      if (!RebuildWithin(engine, fwd_[x], x, false, small)) {
        std::swap(taken, fwd_[x]);
        return;
      }
      cut_.insert(cut_.end(), found_interior_.begin(), found_interior_.end());
      std::sort(cut_.begin(), cut_.end());
      cut_.erase(std::unique(cut_.begin(), cut_.end()), cut_.end());
      // mark_a_: in a small walk; mark_b_: of those, reached from u.
      const uint32_t mark = NextStamp();
      for (StorageId w : cut_) mark_a_[w] = mark;
      auto in_u = [&](StorageId p) {  // p in u's new interior (p's turn taken if cut)
        return !engine.material(p) && taken.interior.contains(p) &&
               (mark_a_[p] != mark || mark_b_[p] == mark);
      };
      auto reached = [&](StorageId v) {
        const StorageAdjacency& in = *into_children_;
        for (const StorageEdge* e = in.begin(v); e != in.end(v) && e->key < created; ++e)
          if (e->storage == u || in_u(e->storage)) return true;
        return false;
      };
      Region& own = fwd_[u];
      own.Clear();
      own.exact = taken.exact;
      for (StorageId w : cut_) {  // some may lie beyond R, along later edges
        if (!taken.interior.contains(w)) continue;
        if (reached(w))
          mark_b_[w] = mark;
        else
          own.exact -= engine.storage_compute(w);
      }
      own.cutoff = taken.cutoff;
      taken.frontier.ForEach([&](StorageId f) {
        if (reached(f)) own.frontier.insert(f);
      });
      for (StorageId s : remat_)  // u among them, in no frontier of its own
        if (taken.interior.contains(s)) {
          own.exact -= engine.storage_compute(s);
          if (s != u && reached(s)) own.frontier.insert(s);
        }
      own.compute = own.exact;
      own.interior = std::move(taken.interior);
      for (StorageId s : remat_) own.interior.erase(s);
      for (StorageId w : cut_)
        if (mark_b_[w] != mark) own.interior.erase(w);
      if (own.cutoff < created) Grow(engine, own, u, false);
      stale_[u] |= kDerived;
      if (g_verify_shrinks.load(std::memory_order_relaxed)) {
        VerifyShrink(engine, own, u, false);
        ++g_verified_derived;
      }
    });
  }
}

// The storages that can leave r are those reached through a rematerialized
// one; each is looked at once, in storage order, after all its predecessors
// (the storage graph is ordered: see Init), and stays if one of them is the
// base or stays in the interior. A rematerialized storage joins the frontier
// on the same condition. Once more than a quarter of the interior has left,
// walking what remains costs about as much: Rebuild() instead (a half was
// 7-19% slower on LSTM 0.266, InceptionV4 0.2 and TreeLSTM 0.1). A shrink
// that removes much of a large region may leave little, which a walk finds
// sooner: the two race, a walk being tried each time the storages looked
// at double from 64, and given up once it has found as many evicted
// storages, so a shrink costs at most about three times the cheaper of the two.
void EvictedRegions::Shrink(const Engine& engine, Region& r, StorageId base, bool reverse) {
  const StorageAdjacency& out = reverse ? *parents_ : *children_;
  const StorageAdjacency& in = reverse ? *into_parents_ : *into_children_;
  const TensorId created = engine.tensors_created();
  // A storage is pushed only before it is popped (by its predecessors, all
  // popped before it), so the queue's own bit is its mark.
  auto push = [&](StorageId v) { queue_.push(v, reverse); };
  auto push_next = [&](StorageId v) {
    for (const StorageEdge* e = out.begin(v); e != out.end(v) && e->key < created; ++e)
      push(e->storage);
  };
  auto reached = [&](StorageId v) {
    for (const StorageEdge* e = in.begin(v); e != in.end(v) && e->key < created; ++e)
      if (e->storage == base || r.interior.contains(e->storage)) return true;
    return false;
  };
  const size_t before = r.interior.size();
  size_t removed = 0, looked_at = 0, race_at = kFirstRace;
  for (StorageId u : remat_) {
    if (r.interior.erase(u)) {
      r.exact -= engine.storage_compute(u);
      ++removed;
      push_next(u);
    }
    push(u);
  }
  while (!queue_.empty()) {
    if (++looked_at == race_at) {
      race_at *= 2;
      if (RebuildWithin(engine, r, base, reverse, looked_at)) {
        while (!queue_.empty()) queue_.pop(reverse);
        if (g_verify_shrinks.load(std::memory_order_relaxed)) ++g_verified_raced_walks;
        return;
      }
      if (g_verify_shrinks.load(std::memory_order_relaxed)) ++g_verified_lost_walks;
    }
    const StorageId v = queue_.pop(reverse);
    if (stale_[v] & kStaleRemat) {
      if (reached(v)) r.frontier.insert(v);
    } else if (r.interior.contains(v)) {
      if (reached(v)) continue;
      r.interior.erase(v);
      r.exact -= engine.storage_compute(v);
      push_next(v);
      if (++removed * 4 > before) {
        while (!queue_.empty()) queue_.pop(reverse);
        Rebuild(engine, r, base, reverse);
        return;
      }
    } else if (r.frontier.contains(v) && !reached(v)) {
      r.frontier.erase(v);
    }
  }
  r.compute = r.exact;
}

void EvictedRegions::VerifyShrink(const Engine& engine, const Region& r, StorageId base,
                                  bool reverse) {
  const int64_t compute = Walk(engine, base, reverse, found_interior_, found_frontier_);
  bool same = found_interior_.size() == r.interior.size() &&
              found_frontier_.size() == r.frontier.size() && compute == r.compute;
  for (StorageId s : found_interior_) same = same && r.interior.contains(s);
  for (StorageId s : found_frontier_) same = same && r.frontier.contains(s);
  ++g_verified_shrinks;
  if (!same)
    throw std::logic_error("evicted regions: a shrunk " +
                           std::string(reverse ? "reverse" : "forward") + " region of storage " +
                           std::to_string(base) + " differs from a rebuild");
}

void EvictedRegions::VerifyExact(const Engine& engine, const Region& r, StorageId base, bool reverse) const {
  int64_t sum = 0;
  r.interior.ForEach([&](StorageId x) { sum += engine.storage_compute(x); });
  if (sum != r.exact)
    throw std::logic_error("evicted regions: the " + std::string(reverse ? "reverse" : "forward") +
                           " region of storage " + std::to_string(base) +
                           ", not marked for a walk, sums its computes to " + std::to_string(sum) +
                           ", not to its exact " + std::to_string(r.exact));
}

bool EvictedRegions::Shrinks(const Engine& engine) const {
  return ordered_ && engine.runtime() != RuntimeKind::kV1;
}

// The regions a walk now would find holding s (s is evicted, or about to
// be): those of the material storages at the edge of a walk from s.
void EvictedRegions::MarkForWalk(const Engine& engine, StorageId s, bool reverse,
                                 const StorageSet* skip, StorageId also_material) {
  Walk(engine, s, !reverse, found_interior_, found_frontier_);
  MarkFoundForWalk(engine, reverse, skip, also_material);
}

void EvictedRegions::MarkFoundForWalk(const Engine& engine, bool reverse, const StorageSet* skip,
                                      StorageId also_material) {
  marked_.clear();  // Resolve() below walks into found_frontier_
  for (StorageId x : found_frontier_)
    if (!engine.pinned(x) && !(skip && skip->contains(x))) marked_.push_back(x);
  for (StorageId x : marked_) {
    if (!reverse && fwd_[x].deferred) Resolve(engine, x, also_material);
    (reverse ? rev_[x] : fwd_[x]).walk = true;
  }
}

// An operator's new edges go from its arguments to its outputs, keyed by its
// outputs. The regions holding an argument (forward) or an output (reverse)
// as base or in their interior may miss what they reach: their cutoff
// drops to the operator's first output. The others reach none of them.
void EvictedRegions::Created(const Engine& engine, OpId id) {
  if (!Shrinks(engine)) return;
  const Trace& trace = engine.trace();
  const Operator& op = trace.ops[id];
  const TensorId first = op.first_output;
  auto lower = [first](Region& r) { r.cutoff = std::min(r.cutoff, first); };
  auto mark = [&](StorageId s, bool reverse) {
    if (engine.material(s)) {
      if (!engine.pinned(s)) lower(reverse ? rev_[s] : fwd_[s]);
      return;
    }
    Walk(engine, s, !reverse, found_interior_, found_frontier_);
    for (StorageId x : found_frontier_)
      if (!engine.pinned(x)) lower(reverse ? rev_[x] : fwd_[x]);
  };
  for (TensorId a : op.args) mark(trace.tensors[a].storage, false);
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    const StorageId s = trace.tensors[first + i].storage;
    if (trace.storages[s].root != first + i) mark(s, true);  // a new storage is in no region
  }
}

void EvictedRegions::ComputeChanging(const Engine& engine, StorageId s) {
  if (!Shrinks(engine) || engine.material(s)) return;
  MarkForWalk(engine, s, false);
  MarkForWalk(engine, s, true);
}

void EvictedRegions::Evicted(const Engine& engine, StorageId s) {
  Untrack(s);
  if (fwd_[s].deferred) Resolve(engine, s, -1);
  // simrd absorbs s into the regions on its own regions' frontiers. One of
  // those that misses what later edges reach (see Region::cutoff) leaves out
  // regions s is really on the frontier of: they may hold s on theirs, so
  // they are walked at their next rebuild.
  if (Shrinks(engine))
    for (const bool reverse : {false, true}) {
      const Region& own = reverse ? rev_[s] : fwd_[s];
      if (own.walk) {
        MarkForWalk(engine, s, !reverse, &own.frontier, s);
      } else if (own.cutoff < engine.tensors_created()) {
        Growth(engine, own, s, reverse);  // what own.frontier misses
        MarkFoundForWalk(engine, !reverse, nullptr, s);
      }
    }
  // Copies: Absorb() may edit s's own regions when the storage graph has a cycle.
  std::vector<StorageId> frontier;
  rev_[s].ForEachFrontier([&](StorageId x) { frontier.push_back(x); });
  // Pinned storages' regions are never read again (see Rematerialized). The
  // last absorb of each of s's regions may take its interior (it is dropped
  // below; the reverse absorbs still read the forward frontier).
  auto last_unpinned = [&] {
    auto it = std::find_if(frontier.rbegin(), frontier.rend(),
                           [&](StorageId x) { return !engine.pinned(x); });
    return it == frontier.rend() ? StorageId{-1} : *it;
  };
  StorageId last = last_unpinned();
  for (StorageId ps : frontier) {
    if (engine.pinned(ps)) continue;
    if (fwd_[ps].deferred) Resolve(engine, ps, s);  // as it was before s's eviction
    Absorb(engine, fwd_[ps], s, false, ps == last);
    NoteChanged(ps);
  }
  frontier.clear();
  fwd_[s].ForEachFrontier([&](StorageId x) { frontier.push_back(x); });
  last = last_unpinned();
  for (StorageId cs : frontier)
    if (!engine.pinned(cs)) {
      Absorb(engine, rev_[cs], s, true, cs == last);
      NoteChanged(cs);
    }
  fwd_[s] = Region{};  // release the memory: an evicted storage has no regions
  rev_[s] = Region{};
  ShareBlocksIfMany();
}

void EvictedRegions::ShareBlocksIfMany() {
  const uint64_t made = StorageSet::blocks_made();       // this thread's
  if (made < made_at_sharing_) made_at_sharing_ = made;  // copied from another thread
  if (made - made_at_sharing_ <
      std::max({kShareEvery, uint64_t{fwd_.size() / 2}, pass_slots_ / 64}))
    return;
  const size_t seen = sharing_.slots_seen();
  for (std::vector<Region>* regions : {&fwd_, &rev_})
    for (Region& r : *regions) {
      sharing_.Add(r.interior);
      sharing_.Add(r.frontier);
    }
  sharing_.Prune();
  pass_slots_ = sharing_.slots_seen() - seen;
  made_at_sharing_ = StorageSet::blocks_made();
}

// Absorb(), taking reg's interior (current sum) and adding r's few members
// to it: those already there are the common ones, whose computes reg's sum
// counts. Out of line: inlined, it slowed every other absorb.
[[gnu::noinline]] void EvictedRegions::TakeInterior(const Engine& engine, Region& r, Region& reg) {
  StorageSet mine = std::move(r.interior);
  r.interior = std::move(reg.interior);
  reg.interior.clear();
  int64_t added = reg.exact;
  mine.ForEach([&](StorageId x) {
    if (!r.interior.insert(x)) added -= engine.storage_compute(x);
  });
  r.compute += added;
  r.exact += added;
}

// simrd: Region.absorb(): r's frontier storage fs was just evicted; fs joins
// the interior with the interior of its own region, whose frontier joins r's.
// Quirk kept from simrd (optimization/region.py): fs's compute is added even
// if fs is already in the interior, and every compute is the storage's
// current one, not the one it had when the region was built.
// The compute the new members add is summed member by member, or, when
// reg's sum is current, it has more than 64 members and fewer than half of
// them can be in r (r is less than half its size, or the two bitmaps share
// too few words), as reg's sum less theirs. When reg is taken and r is
// less than 1/64 of its size, reg's interior becomes r's and r's own
// members are added to it (TakeInterior()).
void EvictedRegions::Absorb(const Engine& engine, Region& r, StorageId fs, bool reverse,
                            bool take) {
  Region& own = reverse ? rev_[fs] : fwd_[fs];
  std::optional<Region> copy;  // only for a cycle (r is fs's own region)
  const Region& reg = (&own == &r) ? copy.emplace(own) : own;
  if (!r.frontier.erase(fs))
    engine.SimrdAssertion("an evicted storage is missing from a region frontier");
  // reg's sum is current when its storage graph is ordered (where a compute
  // that changes marks every region holding the storage for a walk) and it
  // is not so marked.
  const bool current = Shrinks(engine) && !reg.walk;
  if (current && g_verify_shrinks.load(std::memory_order_relaxed)) VerifyExact(engine, reg, fs, reverse);
  r.cutoff = std::min(r.cutoff, reg.cutoff);
  // A frontier table (or small set) that will hold fewer than 8 storages
  // stays one, without ReserveFor()'s scans of both sets for their ranges:
  // a quarter of the instructions of the generated rnn of 10^5 operators at
  // 0.5, whose frontiers hold about two storages far apart (the generated
  // resnet's are close, and it runs 2% more instructions as tables:
  // docs/speed.md).
  if (r.frontier.listed() && r.frontier.size() + reg.frontier.size() < 8)
    r.frontier.reserve(r.frontier.size() + reg.frontier.size());
  else
    r.frontier.ReserveFor(reg.frontier);
  r.frontier.UnionWith(reg.frontier);
  const bool fs_in_interior = r.interior.contains(fs);
  bool fs_in_diff = false;  // fs joins with reg's interior (a cycle)
  if (take && &own != &r && current && reg.interior.size() > 64 &&
      64 * r.interior.size() < reg.interior.size()) {
    TakeInterior(engine, r, own);
    fs_in_diff = !fs_in_interior && r.interior.contains(fs);
  } else if (current && reg.interior.size() > 64 &&
             (2 * r.interior.size() < reg.interior.size() ||
              (r.interior.dense() && reg.interior.dense() &&
               2 * r.interior.CommonBound(reg.interior) < reg.interior.size()))) {
    int64_t added = reg.exact;
    r.interior.ForEachCommon(reg.interior, [&](StorageId x) { added -= engine.storage_compute(x); });
    fs_in_diff = !fs_in_interior && reg.interior.contains(fs);
    r.interior.ReserveFor(reg.interior);
    r.interior.UnionWith(reg.interior);
    r.compute += added;
    r.exact += added;
  } else {
    r.interior.ReserveFor(reg.interior);
    r.interior.UnionWith(reg.interior, [&](StorageId x) {
      const int64_t c = engine.storage_compute(x);
      r.compute += c;
      r.exact += c;
      fs_in_diff = fs_in_diff || x == fs;
    });
  }
  r.walk = r.walk || reg.walk;
  if (!fs_in_diff) {
    const int64_t c = engine.storage_compute(fs);
    r.compute += c;
    if (!fs_in_interior) {
      r.interior.insert(fs);
      r.exact += c;
    }
  }
}

}  // namespace dtr
