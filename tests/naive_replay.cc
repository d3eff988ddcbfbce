#include "tests/naive_replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "checker/engine/exact_divide.h"
#include "model/error.h"

namespace dtr::testing {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct NTensor;
struct NStorage {
  int64_t size = 0;
  int64_t compute = 0;
  bool material = false;
  std::vector<NTensor*> tensors;
  int ref_int = 0, ref_ext = 0;
  bool pinned = false;
  int root_id = 0;
  bool accessed = false;  // last_access_int is -inf until set
  int64_t last_access = 0;
  bool in_pool = false;
  std::set<int> reg_interior, reg_frontier, rev_interior, rev_frontier;
  int64_t reg_compute = 0, rev_compute = 0;
  int ecn = -1;  // union-find node, -1 for None
  std::set<int> evicted_dependents;
  bool banished = false;
};

struct NTensor {
  int id = 0;
  const Operator* op = nullptr;
  int index = 0;
  NStorage* storage = nullptr;
  std::vector<NTensor*> parents, siblings, children;
  bool defined = false;
  int ref_ext = 0;
  bool is_alias = false;
};

struct Oom {};
struct Thrash {};

class Naive {
 public:
  Naive(const Trace& trace, const ReplayConfig& c) : trace_(trace), c_(c) {
    v1_ = c.runtime == RuntimeKind::kV1;
    eager_ = c.runtime == RuntimeKind::kV2Eager || c.runtime == RuntimeKind::kV2EagerOptimized;
    bool optimized = c.runtime == RuntimeKind::kV2Optimized || c.runtime == RuntimeKind::kV2EagerOptimized;
    regions_ = optimized && c.heuristic && (c.heuristic->features & kFeatureRegions);
    eq_ = optimized && c.heuristic && (c.heuristic->features & kFeatureEqClass);
    run_.result.budget = c.budget;
    run_.result.evict_count.assign(trace.storages.size(), 0);
    run_.result.heuristic_evict_count.assign(trace.storages.size(), 0);
    storages_.resize(trace.storages.size());
  }

  NaiveRun Run() {
    try {
      for (const Step& st : trace_.program) {
        if (st.kind == StepKind::kCompute) {
          Compute(trace_.ops[st.target]);
        } else {
          NTensor* t = tensors_.at(st.target).get();
          if (st.kind == StepKind::kGet) {
            t->storage->ref_ext++;
            t->ref_ext++;
          } else if (st.kind == StepKind::kRelease) {
            ReleaseTensor(t);
          } else {
            if (!t->defined) Materialize(t, true);
            Pin(t);
          }
        }
      }
      run_.result.outcome = Outcome::kPass;
    } catch (const Oom&) {
      run_.result.outcome = Outcome::kOom;
    } catch (const Thrash&) {
      run_.result.outcome = Outcome::kThrash;
    }
    for (size_t s = 0; s < storages_.size(); ++s) {
      run_.result.distinct_evicted += run_.result.evict_count[s] > 0;
      run_.result.distinct_heuristic_evicted += run_.result.heuristic_evict_count[s] > 0;
    }
    return std::move(run_);
  }

 private:
  NStorage* StorageOf(int root_id) { return tensors_.at(root_id)->storage; }

  void Compute(const Operator& op) {
    std::vector<NTensor*> outs;
    for (int i = 0; i < op.num_outputs; ++i) {
      const Tensor& spec = trace_.tensors[op.first_output + i];
      auto t = std::make_unique<NTensor>();
      t->id = op.first_output + i;
      t->op = &op;
      t->index = i;
      for (TensorId a : op.args) t->parents.push_back(tensors_.at(a).get());
      if (!spec.is_alias) {
        storages_[spec.storage] = std::make_unique<NStorage>();
        storages_[spec.storage]->size = spec.size;
        storages_[spec.storage]->root_id = t->id;
        if (eq_) storages_[spec.storage]->ecn = NewNode(0);
      }
      t->storage = storages_[spec.storage].get();
      t->is_alias = t->id != t->storage->root_id;
      t->storage->tensors.push_back(t.get());
      t->storage->ref_ext++;
      t->ref_ext = 1;
      // Storage.get_compute(): sum over the distinct operators of its tensors.
      std::set<const Operator*> seen;
      t->storage->compute = 0;
      for (NTensor* u : t->storage->tensors)
        if (seen.insert(u->op).second) t->storage->compute += u->op->compute;
      if (op.is_constant) run_.result.const_memory += spec.size;
      outs.push_back(t.get());
      tensors_[t->id] = std::move(t);
    }
    for (NTensor* t : outs)
      for (NTensor* u : outs)
        if (u != t) t->siblings.push_back(u);
    for (NTensor* p : outs[0]->parents) p->children.insert(p->children.end(), outs.begin(), outs.end());
    if (v1_) {
      for (NTensor* t : outs)
        for (NTensor* p : t->parents)
          if (t->storage->root_id != p->storage->root_id) p->storage->evicted_dependents.insert(t->id);
    }
    Materialize(outs[0], false);
    for (NTensor* t : outs) {
      t->storage->accessed = true;
      t->storage->last_access = run_.result.clock;
    }
  }

  void Materialize(NTensor* t, bool remat) {
    frames_.push_back(t);
    for (NTensor* p : t->parents) {
      if (v1_ && p->storage->ref_ext <= 0) continue;
      p->storage->accessed = true;
      p->storage->last_access = run_.result.clock;
    }
    std::vector<NTensor*> defined, undefined;
    for (NTensor* p : t->parents) (p->defined ? defined : undefined).push_back(p);
    for (NTensor* p : defined) Lock(p->storage);
    for (NTensor* p : undefined) {
      if (!p->defined) Materialize(p, true);
      Lock(p->storage);
    }
    if (memory_ + t->op->total_size > c_.budget) Free(t->op->total_size);
    std::vector<NTensor*> remat_siblings = ComputeTensor(t, remat);
    if (v1_) {
      for (size_t i = 0; i < t->parents.size(); ++i) {  // a live list, as simrd iterates it
        NTensor* p = t->parents[i];
        Unlock(p->storage);
        std::vector<NTensor*> done = remat_siblings;
        done.push_back(t);
        for (NTensor* u : done)
          if (u->storage->root_id != p->storage->root_id) p->storage->evicted_dependents.erase(u->id);
        TryBanish(p->storage);
      }
    } else {
      for (NTensor* p : t->parents) Unlock(p->storage);
    }
    if (static_cast<double>(run_.result.remat_compute) > c_.remat_limit) throw Thrash{};
    int64_t need = t->op->total_size;
    for (NTensor* p : t->parents) need += trace_.tensors[p->id].size;
    run_.result.bottleneck_memory = std::max(run_.result.bottleneck_memory, need);
    frames_.pop_back();
  }

  std::vector<NTensor*> ComputeTensor(NTensor* t, bool remat) {
    std::vector<NTensor*> dup, remat_siblings, remat_storages;
    for (NTensor* u : t->siblings) (u->defined ? dup : remat_siblings).push_back(u);
    for (NTensor* u : t->siblings)
      if (!u->storage->material) remat_storages.push_back(u);
    if (!t->storage->material) remat_storages.push_back(t);
    run_.result.clock += t->op->compute;
    memory_ += t->op->total_size;
    run_.result.max_memory = std::max(run_.result.max_memory, memory_);
    t->storage->material = true;
    t->defined = true;
    (remat ? run_.result.remat_compute : run_.result.model_compute) += t->op->compute;
    for (NTensor* u : remat_siblings) {
      u->storage->material = true;
      u->defined = true;
    }
    for (NTensor* u : dup) memory_ -= trace_.tensors[u->id].size;
    for (NTensor* u : remat_storages) MakeEvictable(u->storage);
    if (regions_) {
      std::set<int> affected, affected_rev;
      for (NTensor* u : remat_storages) {
        Rebuild(u->storage, false);
        Rebuild(u->storage, true);
        affected.insert(u->storage->rev_frontier.begin(), u->storage->rev_frontier.end());
        affected_rev.insert(u->storage->reg_frontier.begin(), u->storage->reg_frontier.end());
      }
      for (int id : affected) Rebuild(StorageOf(id), false);
      for (int id : affected_rev) Rebuild(StorageOf(id), true);
    }
    if (eq_) {
      for (NTensor* u : remat_storages) {
        NStorage* s = u->storage;
        value_[Find(s->ecn)] -= s->compute;
        s->ecn = -1;
      }
    }
    return remat_siblings;
  }

  void Free(int64_t size) {
    while (memory_ + size > c_.budget) {
      if (pool_.empty()) {
        OomContext o;
        o.program_op = frames_.front()->op->name;
        o.op = frames_.back()->op->name;
        o.tensor = trace_.tensors[frames_.back()->id].name;
        o.request = frames_.back()->op->total_size;
        o.memory_usage = memory_;
        for (auto& s : storages_) {
          if (!s || !s->material) continue;
          if (s->pinned) {
            o.pinned_memory += s->size;
          } else if (s->ref_int > 0) {
            o.locked_memory += s->size;
            o.locked_storages++;
          }
        }
        o.remat_depth = static_cast<int>(frames_.size()) - 1;
        run_.result.oom = o;
        throw Oom{};
      }
      NStorage* s = Choose();
      run_.decisions.push_back(trace_.tensors[s->root_id].storage);
      Evict(s, true);
    }
  }

  NStorage* Choose() {
    double best = kInf;
    NStorage* best_s = nullptr;
    for (NStorage* s : pool_) {
      double score = Evaluate(s);
      run_.result.heuristic_evals++;
      if (score <= best) {
        best = score;
        best_s = s;
      }
      if (score == 0) break;
    }
    if (!best_s) throw Error("naive: nothing to choose");
    return best_s;
  }

  static double Div(int64_t num, __int128 den) {
    if (den <= 0) return kInf;
    return num < 0 ? -ExactDivide(static_cast<uint64_t>(-num), static_cast<uint128>(den))
                   : ExactDivide(static_cast<uint64_t>(num), static_cast<uint128>(den));
  }

  // Heuristic.evaluate() of each heuristic, spelled out.
  double Evaluate(NStorage* s) {
    const std::string_view h = c_.heuristic->name;
    bool stale_inf = !s->accessed;
    __int128 stale = stale_inf ? 0 : run_.result.clock - s->last_access;
    auto size_stale = [&](int64_t num) {
      if (stale_inf) return s->size == 0 ? kInf : 0.0;
      return Div(num, static_cast<__int128>(s->size) * stale);
    };
    auto only_stale = [&](int64_t num) { return stale_inf ? 0.0 : Div(num, stale); };
    int64_t estar = s->compute + s->reg_compute + s->rev_compute;
    if (regions_) {
      // simrd reads its incremental regions; measure how often a from-scratch
      // rebuild would give another number (DESIGN.md: simrd's number wins).
      std::set<int> interior, frontier;
      int64_t fwd = 0, rev = 0;
      Walk(s, false, interior, frontier, fwd);
      Walk(s, true, interior, frontier, rev);
      ++run_.region_evaluations;
      bool stale = (h == "MSPS") ? rev != s->rev_compute : fwd + rev != s->reg_compute + s->rev_compute;
      run_.region_stale_evaluations += stale;
    }
    if (h == "DTR" || h == "AbESizeStale") return size_stale(estar);
    if (h == "AbESize") return Div(estar, s->size);
    if (h == "AbEStale") return only_stale(estar);
    if (h == "AbE") return static_cast<double>(estar);
    if (h == "DTREqClass" || h == "AbEqSizeStale") return size_stale(EqCompute(s));
    if (h == "AbEqSize") return Div(EqCompute(s), s->size);
    if (h == "AbEqStale") return only_stale(EqCompute(s));
    if (h == "AbEq") return static_cast<double>(EqCompute(s));
    if (h == "DTRLocal" || h == "AbLocalSizeStale") return size_stale(s->compute);
    if (h == "AbLocalSize") return Div(s->compute, s->size);
    if (h == "AbLocalStale") return only_stale(s->compute);
    if (h == "AbLocal") return static_cast<double>(s->compute);
    if (h == "AbSizeStale") return size_stale(1);
    if (h == "LargestStorage" || h == "AbSize") return Div(1, s->size);
    if (h == "AbStale") return only_stale(1);
    if (h == "MSPS") return Div(s->compute + s->rev_compute, s->size);
    if (h == "LRU") return s->accessed ? static_cast<double>(s->last_access) : -kInf;
    if (h == "DTRUnopt") {
      // Heuristic.evicted_neighborhood(): both regions rebuilt from scratch.
      std::set<int> fwd_int, fwd_front, rev_int, rev_front;
      int64_t ignored;
      Walk(s, false, fwd_int, fwd_front, ignored);
      Walk(s, true, rev_int, rev_front, ignored);
      std::set<int> nbhd = fwd_int;
      nbhd.insert(rev_int.begin(), rev_int.end());
      int64_t compute = s->compute;
      bool accessed = s->accessed;
      int64_t last = s->last_access;
      for (int id : nbhd) {
        NStorage* u = StorageOf(id);
        compute += u->compute;
        if (u->accessed && (!accessed || u->last_access > last)) {
          accessed = true;
          last = u->last_access;
        }
      }
      if (!accessed) return s->size == 0 ? kInf : 0.0;
      return Div(compute, static_cast<__int128>(s->size) * (run_.result.clock - last));
    }
    throw Error("naive: unsupported heuristic");
  }

  std::set<NStorage*> EvictedNeighbors(NStorage* s) {
    std::set<NStorage*> out;
    for (NTensor* t : s->tensors) {
      for (NTensor* p : t->parents)
        if (!p->storage->material && p->storage->root_id != s->root_id) out.insert(p->storage);
      for (NTensor* c : t->children)
        if (!c->storage->material && c->storage->root_id != s->root_id) out.insert(c->storage);
    }
    return out;
  }

  int64_t EqCompute(NStorage* s) {
    std::set<int> roots;
    for (NStorage* n : EvictedNeighbors(s)) roots.insert(Find(n->ecn));
    int64_t total = s->compute;
    for (int r : roots) total += value_[r];
    return total;
  }

  // Region.rebuild() into the given sets.
  void Walk(NStorage* base, bool reverse, std::set<int>& interior, std::set<int>& frontier, int64_t& compute) {
    interior.clear();
    frontier.clear();
    compute = 0;
    std::vector<NStorage*> stack{base};
    while (!stack.empty()) {
      NStorage* s = stack.back();
      stack.pop_back();
      for (NTensor* t : s->tensors)
        for (NTensor* u : reverse ? t->parents : t->children) {
          NStorage* us = u->storage;
          if (us->material) {
            if (us->root_id != base->root_id) frontier.insert(us->root_id);
            continue;
          }
          if (!interior.count(us->root_id)) {
            compute += us->compute;
            interior.insert(us->root_id);
            stack.push_back(us);
          }
        }
    }
  }

  void Rebuild(NStorage* s, bool reverse) {
    if (reverse)
      Walk(s, true, s->rev_interior, s->rev_frontier, s->rev_compute);
    else
      Walk(s, false, s->reg_interior, s->reg_frontier, s->reg_compute);
  }

  // Region.absorb() of `fs` into the region (reverse or not) of `self`.
  void Absorb(NStorage* self, NStorage* fs, bool reverse) {
    std::set<int>& frontier = reverse ? self->rev_frontier : self->reg_frontier;
    std::set<int>& interior = reverse ? self->rev_interior : self->reg_interior;
    int64_t& compute = reverse ? self->rev_compute : self->reg_compute;
    std::set<int> other_frontier = reverse ? fs->rev_frontier : fs->reg_frontier;
    std::set<int> other_interior = reverse ? fs->rev_interior : fs->reg_interior;
    if (!frontier.erase(fs->root_id))
      throw Error(self->pinned ? kPinnedAbsorbAssertion : "naive: absorb of a storage not in the frontier");
    frontier.insert(other_frontier.begin(), other_frontier.end());
    std::set<int> diff;
    for (int id : other_interior)
      if (!interior.count(id)) diff.insert(id);
    diff.insert(fs->root_id);
    for (int id : diff) compute += StorageOf(id)->compute;
    interior.insert(diff.begin(), diff.end());
  }

  void Evict(NStorage* s, bool heuristic) {
    s->material = false;
    memory_ -= s->size;
    MakeUnevictable(s);
    for (NTensor* t : s->tensors) {
      t->defined = false;
      if (v1_)
        for (NTensor* p : t->parents)
          if (s->root_id != p->storage->root_id) p->storage->evicted_dependents.insert(t->id);
    }
    int sid = trace_.tensors[s->root_id].storage;
    run_.result.evict_count[sid]++;
    if (heuristic) {
      run_.result.heuristic_evictions++;
      run_.result.heuristic_evict_count[sid]++;
    } else {
      run_.result.eager_evictions++;
    }
    if (regions_) {
      std::set<int> rev_frontier = s->rev_frontier, reg_frontier = s->reg_frontier;
      for (int id : rev_frontier) Absorb(StorageOf(id), s, false);
      for (int id : reg_frontier) Absorb(StorageOf(id), s, true);
      s->reg_interior.clear();
      s->reg_frontier.clear();
      s->rev_interior.clear();
      s->rev_frontier.clear();
      s->reg_compute = s->rev_compute = 0;
    }
    if (eq_) {
      s->ecn = NewNode(s->compute);
      for (NStorage* n : EvictedNeighbors(s)) Merge(n->ecn, s->ecn);
    }
  }

  void ReleaseTensor(NTensor* t) {
    NStorage* s = t->storage;
    s->ref_ext--;
    t->ref_ext--;
    if (v1_) {
      if (s->ref_ext == 0) TryBanish(s);
    } else if (eager_ && s->ref_ext == 0 && s->material && !s->pinned) {
      Evict(s, false);
    }
  }

  void TryBanish(NStorage* s) {
    if (s->ref_ext > 0 || !s->evicted_dependents.empty()) return;
    if (s->material) {
      s->ref_int = 0;
      Evict(s, false);
    }
    for (NTensor* t : s->tensors) {
      for (size_t i = 0; i < t->parents.size(); ++i) {
        NTensor* p = t->parents[i];
        if (s->root_id == p->storage->root_id) continue;
        p->storage->evicted_dependents.erase(t->id);
        p->children.erase(std::find(p->children.begin(), p->children.end(), t));
      }
      for (size_t i = 0; i < t->children.size(); ++i) {
        NTensor* c = t->children[i];
        if (s->root_id == c->storage->root_id) continue;
        c->parents.erase(std::find(c->parents.begin(), c->parents.end(), t));
        Pin(c);
      }
    }
    s->banished = true;
  }

  void Pin(NTensor* t) {
    if (!t->storage->material) throw Error("naive: pin of an evicted storage");
    if (t->storage->pinned) return;
    Lock(t->storage);
    t->storage->pinned = true;
  }
  void Lock(NStorage* s) {
    if (s->ref_int == 0) MakeUnevictable(s);
    s->ref_int++;
  }
  void Unlock(NStorage* s) {
    if (--s->ref_int == 0) MakeEvictable(s);
  }
  void MakeEvictable(NStorage* s) {
    if (std::find(pool_.begin(), pool_.end(), s) == pool_.end()) pool_.push_back(s);
  }
  void MakeUnevictable(NStorage* s) {
    auto it = std::find(pool_.begin(), pool_.end(), s);
    if (it != pool_.end()) pool_.erase(it);
  }

  int NewNode(int64_t v) {
    parent_.push_back(-1);
    value_.push_back(v);
    return static_cast<int>(parent_.size()) - 1;
  }
  int Find(int n) { return parent_[n] < 0 ? n : (parent_[n] = Find(parent_[n])); }
  void Merge(int a, int b) {
    int l = Find(a), r = Find(b);
    if (l == r) return;
    parent_[l] = r;
    value_[r] = value_[l] + value_[r];
  }

  const Trace& trace_;
  const ReplayConfig& c_;
  bool v1_, eager_, regions_, eq_;
  NaiveRun run_;
  int64_t memory_ = 0;
  std::map<int, std::unique_ptr<NTensor>> tensors_;
  std::vector<std::unique_ptr<NStorage>> storages_;
  std::vector<NStorage*> pool_;
  std::vector<NTensor*> frames_;
  std::vector<int> parent_;
  std::vector<int64_t> value_;
};

}  // namespace

NaiveRun NaiveReplay(const Trace& trace, const ReplayConfig& config) { return Naive(trace, config).Run(); }

}  // namespace dtr::testing
