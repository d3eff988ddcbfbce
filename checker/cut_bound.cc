// The keep-or-recompute cut (see cut_bound.h) and why it is sound.
//
// Runtime facts used (simrd runtime/v2.py, RuntimeV2 family, any eviction
// script; checker/stepwise_runtime.h follows the same semantics):
//  (F1) A script evicts only at computation points; between the computation
//       of operator q and the start of the next program operator's frame only
//       get, release and pin steps run, and the only evictions there are the
//       eager ones (RuntimeV2Eager*: a storage whose last external reference
//       is released is evicted if material and not pinned).
//  (F2) A storage becomes material only when its root's operator is computed;
//       a tensor becomes defined only when its own operator is computed; an
//       evicted storage leaves all its tensors undefined.
//  (F3) A frame for tensor t locks, when it starts, the storages of t's
//       operator's arguments that are defined; then, in argument order, it
//       materializes each undefined argument (a nested frame) and locks it. A
//       lock is held until the frame's computation; locked storages are
//       material. So while a frame of operator c is materializing its argument
//       at position i, the storages of c's arguments at positions before the
//       first occurrence of that argument are locked (each was defined at the
//       start or materialized before it).
//  (F4) At every computation point (budget check) memory, which includes every
//       material storage (pinned and locked ones among them), plus the
//       operator's total output size, is at most the budget in a passing run.
//  (F5) Constants are computed once, pinned at once and never evicted; nothing
//       else is pinned before the final pins, which come after the last
//       program computation.
//
// Fix a passing run at budget B, a program operator p (not a constant) and
// the operator q = p - 1 computed before it (ops are computed in id order).
// Let D0 be the storages material at q's computation point, and D the
// storages material when p's frame starts. By (F1), (F2), D = (D0 + q's
// outputs) minus storages evicted by releases in between (eager runtimes).
//  (a) By (F4) at q: B >= static need of q + sum of sizes of D0 \ (pinned +
//      args(q)). (q's outputs are in its request, not in D0.)
//  (b) Forced computations. p is computed in its frame. If an operator c is
//      computed in p's frame and an argument a of c has a storage not in D,
//      then a was undefined when the frame started (F2) and is defined at c's
//      computation (F3), so a's operator is computed in p's frame before c.
//      Hence every operator reachable from p along arguments whose storages
//      are not in D is computed in p's frame.
//  (c) Cost of a computation of operator c in p's frame. Its pending frames
//      form a chain p = c_0, c_1, ..., c_k = c where each c_{i+1} computes an
//      argument t_{i+1} of c_i that c_i is materializing: a path in the
//      argument graph. At that point, material and distinct: the pinned
//      storages (constants made before p, F5); SL, the storages of p's
//      arguments defined when p's frame started (locked by p's frame until
//      p's computation, F3) -- we only use those certainly defined: arguments
//      or outputs of q not evicted in between; c's arguments (locked); and
//      the pre-locks of the chain (F3). Counting a pre-locked storage y with
//      weight floor(size(y) / k(y)) per edge, where k(y) is the number of
//      operators that can pre-lock y, never counts more than size(y) on one
//      chain (a chain visits an operator once: arguments precede their
//      consumers), so the weighted length of every chain is at most the size
//      of its pre-locked storages, and the shortest weighted path from p to c
//      bounds the pre-locks of the actual chain from below. Pre-locked
//      storages that are also arguments of c are counted once: we subtract
//      the most they can contribute to the path (k(y) - [c can pre-lock y]
//      edges). Tensors in SL are never requested (they stay locked), so paths
//      do not pass through them; constants are never requested either. With
//      (F4), cost(c) = pinned + |SL u args(c)| + total(c) + max(0, path(c) -
//      overlap) <= B for every c computed in p's frame.
//  (d) So, with E = {c : cost(c) > B}, no operator of E is reachable from p as
//      in (b): the storages in D form a vertex cut between p and E in the
//      argument graph (tensors of storages in D block the path). A storage in
//      D0 beyond q's arguments costs its size in (a); one in args(q) or
//      outputs(q) costs nothing more; one evicted by a release in between
//      cannot be in D. A storage with n tensors in the graph is split as
//      floor(size / n) per tensor, which never charges more than its size.
//      So B >= static need of q + (minimum weighted vertex cut), else no run
//      passes: the cut is a maximum flow.
// Everything used of the schedule (D0, D, the chains) ranges over all
// possibilities, so the test refutes B for every eviction script.
#include "checker/cut_bound.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <unordered_map>

namespace dtr {

namespace {

constexpr int64_t kInfinity = int64_t{1} << 60;

// Facts that depend on neither the frame nor the budget.
struct TraceFacts {
  std::vector<int32_t> compute_step;     // per op
  std::vector<int64_t> pinned_before;    // per op: bytes pinned before its compute step
  std::vector<uint8_t> constant;         // per storage: made by a constant (pinned from creation)
  std::vector<int32_t> lock_capable;     // per storage: k(y), operators that can pre-lock it
  // Per op: its distinct non-constant argument storages, and the storages it
  // can pre-lock (sorted).
  std::vector<std::vector<StorageId>> arg_storages, can_prelock;
  // Per op and argument position: whether it is the first occurrence of a
  // non-constant tensor (an edge of the argument graph), and then the
  // storages pre-locked while it is materialized.
  std::vector<std::vector<uint8_t>> edge;
  std::vector<std::vector<std::vector<StorageId>>> prelocks;
  std::vector<std::pair<int32_t, StorageId>> last_releases;  // (step, storage), by step
};

TraceFacts Gather(const Trace& trace) {
  TraceFacts f;
  const size_t nops = trace.ops.size(), nst = trace.storages.size();
  f.compute_step.assign(nops, -1);
  f.pinned_before.assign(nops, 0);
  f.constant.assign(nst, 0);
  for (StorageId s = 0; s < static_cast<StorageId>(nst); ++s)
    f.constant[s] = trace.op_of(trace.storages[s].root).is_constant;
  std::vector<uint8_t> pinned(nst, 0);
  std::vector<int32_t> refs(nst, 0);
  int64_t pinned_bytes = 0;
  for (int32_t step = 0; step < static_cast<int32_t>(trace.program.size()); ++step) {
    const Step& st = trace.program[step];
    switch (st.kind) {
      case StepKind::kCompute: {
        const Operator& op = trace.ops[st.target];
        f.compute_step[st.target] = step;
        f.pinned_before[st.target] = pinned_bytes;
        for (int32_t i = 0; i < op.num_outputs; ++i)
          ++refs[trace.tensors[op.first_output + i].storage];
        break;
      }
      case StepKind::kGet:
        ++refs[trace.tensors[st.target].storage];
        break;
      case StepKind::kRelease: {
        StorageId s = trace.tensors[st.target].storage;
        if (--refs[s] == 0 && !pinned[s]) f.last_releases.emplace_back(step, s);
        break;
      }
      case StepKind::kPin: {
        StorageId s = trace.tensors[st.target].storage;
        if (!pinned[s]) {
          pinned[s] = 1;
          pinned_bytes += trace.storages[s].size;
        }
        break;
      }
    }
  }
  f.lock_capable.assign(nst, 0);
  f.arg_storages.resize(nops);
  f.can_prelock.resize(nops);
  f.prelocks.resize(nops);
  f.edge.resize(nops);
  for (OpId c = 0; c < static_cast<OpId>(nops); ++c) {
    const Operator& op = trace.ops[c];
    auto& pre = f.prelocks[c];
    pre.resize(op.args.size());
    f.edge[c].assign(op.args.size(), 0);
    std::vector<StorageId> seen;
    for (size_t i = 0; i < op.args.size(); ++i) {
      StorageId s = trace.tensors[op.args[i]].storage;
      bool first = std::find(op.args.begin(), op.args.begin() + i, op.args[i]) ==
                   op.args.begin() + i;
      if (first && !f.constant[s]) {
        f.edge[c][i] = 1;
        pre[i] = seen;
        for (StorageId y : seen) f.can_prelock[c].push_back(y);
      }
      if (!f.constant[s] && std::find(seen.begin(), seen.end(), s) == seen.end())
        seen.push_back(s);
    }
    f.arg_storages[c] = seen;
    auto& lc = f.can_prelock[c];
    std::sort(lc.begin(), lc.end());
    lc.erase(std::unique(lc.begin(), lc.end()), lc.end());
    for (StorageId y : lc) ++f.lock_capable[y];
  }
  return f;
}

// A maximum flow network with int64 capacities (Boost.Graph push-relabel).
class FlowNetwork {
 public:
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, int64_t,
                      boost::property<boost::edge_residual_capacity_t, int64_t,
                                      boost::property<boost::edge_reverse_t,
                                                      Traits::edge_descriptor>>>>;
  using Edge = Traits::edge_descriptor;

  explicit FlowNetwork(size_t vertices) : g_(vertices) {}

  Edge Add(size_t from, size_t to, int64_t capacity) {
    Edge e = boost::add_edge(from, to, g_).first;
    Edge r = boost::add_edge(to, from, g_).first;
    boost::put(boost::edge_capacity, g_, e, capacity);
    boost::put(boost::edge_capacity, g_, r, 0);
    boost::put(boost::edge_reverse, g_, e, r);
    boost::put(boost::edge_reverse, g_, r, e);
    return e;
  }
  void SetCapacity(Edge e, int64_t capacity) { boost::put(boost::edge_capacity, g_, e, capacity); }
  int64_t MaxFlow(size_t source, size_t sink) {
    return boost::push_relabel_max_flow(g_, source, sink);
  }
  // After MaxFlow: the vertices reachable from `source` in the residual graph.
  std::vector<uint8_t> SourceSide(size_t source) const {
    std::vector<uint8_t> seen(boost::num_vertices(g_), 0);
    std::vector<size_t> stack{source};
    seen[source] = 1;
    while (!stack.empty()) {
      size_t v = stack.back();
      stack.pop_back();
      for (auto [e, end] = boost::out_edges(v, g_); e != end; ++e) {
        size_t w = boost::target(*e, g_);
        if (!seen[w] && boost::get(boost::edge_residual_capacity, g_, *e) > 0) {
          seen[w] = 1;
          stack.push_back(w);
        }
      }
    }
    return seen;
  }

 private:
  Graph g_;
};

// One frame's argument graph, its costs and its cut network.
class FrameCut {
 public:
  FrameCut(const Trace& trace, const TraceFacts& facts, const MemoryBound& static_bound,
           const CutOptions& options, OpId p)
      : trace_(trace), f_(facts), p_(p) {
    prev_ = p - 1;
    base_ = prev_ >= 0 ? static_bound.per_op[prev_].total() : 0;
    Build(options);
  }

  int64_t max_cost() const { return max_cost_; }

  // Whether the frame refutes `budget`: the previous computation's static
  // need plus the least memory that must stay material there, so that no
  // operator costing more than `budget` is recomputed in the frame, exceeds
  // it. If so, fills `arg` (if not null).
  bool Refutes(int64_t budget, CutArgument* arg) {
    if (max_cost_ <= budget) return false;
    if (!network_) BuildNetwork();
    OpId example = -1;
    for (size_t i = 0; i < ops_.size(); ++i) {
      bool expensive = cost_[i] > budget;
      network_->SetCapacity(sink_edges_[i], expensive ? kInfinity : 0);
      if (expensive && (example < 0 || cost_[i] > cost_[IndexOf(example)])) example = ops_[i];
    }
    const int64_t cut = network_->MaxFlow(kSource, kSink);
    if (base_ + cut <= budget) return false;
    if (arg) {
      arg->op = p_;
      arg->previous = prev_;
      arg->budget = budget;
      arg->previous_need = base_;
      arg->cut = cut;
      arg->expensive = example;
      arg->expensive_cost = cost_[IndexOf(example)];
      arg->cut_storages.clear();
      std::vector<uint8_t> side = network_->SourceSide(kSource);
      for (size_t i = 0; i < tensors_.size(); ++i)
        if (side[TensorIn(i)] && !side[TensorOut(i)])
          arg->cut_storages.push_back(trace_.tensors[tensors_[i]].storage);
      std::sort(arg->cut_storages.begin(), arg->cut_storages.end());
      arg->cut_storages.erase(std::unique(arg->cut_storages.begin(), arg->cut_storages.end()),
                              arg->cut_storages.end());
    }
    return true;
  }

 private:
  static constexpr size_t kSource = 0, kSink = 1;
  size_t TensorIn(size_t i) const { return 2 + 2 * i; }
  size_t TensorOut(size_t i) const { return 3 + 2 * i; }
  size_t OpNode(size_t i) const { return 2 + 2 * tensors_.size() + i; }
  size_t IndexOf(OpId c) const { return op_index_.at(c); }

  StorageId storage(TensorId t) const { return trace_.tensors[t].storage; }

  void Build(const CutOptions& options) {
    const Operator& op = trace_.ops[p_];
    const size_t nst = trace_.storages.size();
    // Storages evicted by releases between q's computation and p's frame.
    gone_.assign(nst, 0);
    if (options.eager && prev_ >= 0) {
      const int32_t from = f_.compute_step[prev_], to = f_.compute_step[p_];
      auto it = std::lower_bound(f_.last_releases.begin(), f_.last_releases.end(),
                                 std::make_pair(from + 1, StorageId{-1}));
      for (; it != f_.last_releases.end() && it->first < to; ++it) gone_[it->second] = 1;
    }
    // Storages material for free when the frame starts: q's arguments and
    // outputs (already counted in q's static need), unless evicted in between.
    free_.assign(nst, 0);
    std::vector<uint8_t> certain(trace_.tensors.size(), 0);
    if (prev_ >= 0) {
      const Operator& q = trace_.ops[prev_];
      auto mark = [&](TensorId t) {
        if (gone_[storage(t)]) return;
        free_[storage(t)] = 1;
        certain[t] = 1;
      };
      for (TensorId a : q.args) mark(a);
      for (int32_t i = 0; i < q.num_outputs; ++i) mark(q.first_output + i);
    }
    // SL: p's arguments certainly defined at the start stay locked all frame.
    locked_.assign(nst, 0);
    locked_tensor_.assign(trace_.tensors.size(), 0);
    for (TensorId a : op.args)
      if (certain[a] && !f_.constant[storage(a)]) {
        locked_[storage(a)] = 1;
        locked_tensor_[a] = 1;
      }
    for (StorageId s = 0; s < static_cast<StorageId>(nst); ++s)
      if (locked_[s]) locked_bytes_ += trace_.storages[s].size;
    pinned_ = f_.pinned_before[p_];

    // Shortest pre-lock paths from p over the argument graph (ops in
    // decreasing id are a topological order: arguments come from earlier ops).
    std::vector<int64_t> dist(p_ + 1, kInfinity);
    std::vector<uint8_t> tensor_seen(trace_.tensors.size(), 0);
    dist[p_] = 0;
    for (OpId c = p_; c >= 0; --c) {
      if (dist[c] == kInfinity) continue;
      const Operator& co = trace_.ops[c];
      for (size_t i = 0; i < co.args.size(); ++i) {
        TensorId t = co.args[i];
        if (f_.constant[storage(t)] || locked_tensor_[t]) continue;  // never requested
        if (!tensor_seen[t]) {
          tensor_seen[t] = 1;
          tensor_index_.emplace(t, tensors_.size());
          tensors_.push_back(t);
        }
        if (!f_.edge[c][i]) continue;  // a repeated argument: its first occurrence is the edge
        int64_t w = 0;
        for (StorageId y : f_.prelocks[c][i])
          if (!locked_[y]) w += trace_.storages[y].size / f_.lock_capable[y];
        OpId a = trace_.tensors[t].op;
        dist[a] = std::min(dist[a], dist[c] + w);
      }
      if (c != p_) ops_.push_back(c);
    }
    cost_.resize(ops_.size());
    std::vector<uint8_t> mark(nst, 0);
    for (size_t i = 0; i < ops_.size(); ++i) {
      OpId c = ops_[i];
      op_index_.emplace(c, i);
      const Operator& co = trace_.ops[c];
      int64_t held = locked_bytes_, overlap = 0;
      for (StorageId y : f_.arg_storages[c]) {
        if (locked_[y]) continue;
        held += trace_.storages[y].size;
        int32_t k = f_.lock_capable[y];
        if (k == 0) continue;
        const auto& lc = f_.can_prelock[c];
        int32_t own = std::binary_search(lc.begin(), lc.end(), y) ? 1 : 0;
        overlap += trace_.storages[y].size / k * (k - own);
      }
      cost_[i] = pinned_ + held + co.total_size + std::max<int64_t>(0, dist[c] - overlap);
      max_cost_ = std::max(max_cost_, cost_[i]);
    }
  }

  void BuildNetwork() {
    network_ = std::make_unique<FlowNetwork>(2 + 2 * tensors_.size() + ops_.size());
    // Tensors per storage in the graph: a storage's size is split among them.
    std::unordered_map<StorageId, int32_t> per_storage;
    for (TensorId t : tensors_) ++per_storage[storage(t)];
    for (size_t i = 0; i < tensors_.size(); ++i) {
      TensorId t = tensors_[i];
      StorageId s = storage(t);
      int64_t capacity = gone_[s]   ? kInfinity
                         : free_[s] ? 0
                                    : trace_.storages[s].size / per_storage[s];
      network_->Add(TensorIn(i), TensorOut(i), capacity);
      OpId c = trace_.tensors[t].op;
      network_->Add(TensorOut(i), OpNode(IndexOf(c)), kInfinity);
    }
    for (TensorId a : trace_.ops[p_].args) {
      auto it = tensor_index_.find(a);
      if (it != tensor_index_.end()) network_->Add(kSource, TensorIn(it->second), kInfinity);
    }
    sink_edges_.resize(ops_.size());
    for (size_t i = 0; i < ops_.size(); ++i) {
      for (TensorId a : trace_.ops[ops_[i]].args) {
        auto it = tensor_index_.find(a);
        if (it != tensor_index_.end()) network_->Add(OpNode(i), TensorIn(it->second), kInfinity);
      }
      sink_edges_[i] = network_->Add(OpNode(i), kSink, 0);
    }
  }

  const Trace& trace_;
  const TraceFacts& f_;
  OpId p_, prev_ = -1;
  int64_t base_ = 0, pinned_ = 0, locked_bytes_ = 0, max_cost_ = 0;
  std::vector<uint8_t> gone_, free_, locked_, locked_tensor_;
  std::vector<TensorId> tensors_;  // requestable tensors reached from p
  std::unordered_map<TensorId, size_t> tensor_index_;
  std::vector<OpId> ops_;  // operators reached from p (p excluded)
  std::unordered_map<OpId, size_t> op_index_;
  std::vector<int64_t> cost_;
  std::unique_ptr<FlowNetwork> network_;
  std::vector<FlowNetwork::Edge> sink_edges_;
};

bool Examined(const Trace& trace, OpId p) {
  const Operator& op = trace.ops[p];
  return !op.is_constant && !op.args.empty();
}

}  // namespace

bool RefuteByCut(const Trace& trace, const MemoryBound& static_bound, int64_t budget,
                 const CutOptions& options, CutArgument* argument) {
  TraceFacts facts = Gather(trace);
  for (OpId p = 0; p < static_cast<OpId>(trace.ops.size()); ++p) {
    if (!Examined(trace, p)) continue;
    FrameCut frame(trace, facts, static_bound, options, p);
    if (frame.Refutes(budget, argument)) return true;
  }
  return false;
}

CutBound ComputeCutBound(const Trace& trace, const MemoryBound& static_bound,
                         const CutOptions& options) {
  auto start = std::chrono::steady_clock::now();
  TraceFacts facts = Gather(trace);
  CutBound b;
  b.bytes = static_bound.bytes;
  const int64_t resolution = std::max<int64_t>(1, options.resolution);
  for (OpId p = 0; p < static_cast<OpId>(trace.ops.size()); ++p) {
    if (!Examined(trace, p)) continue;
    FrameCut frame(trace, facts, static_bound, options, p);
    if (frame.max_cost() <= b.bytes) continue;
    ++b.frames_examined;
    CutArgument arg;
    if (!frame.Refutes(b.bytes, &arg)) continue;
    // Refuted at b.bytes; at max_cost() nothing is expensive, so it passes.
    int64_t lo = b.bytes, hi = frame.max_cost();
    while (hi - lo > resolution) {
      int64_t mid = lo + (hi - lo) / 2;
      CutArgument at_mid;
      if (frame.Refutes(mid, &at_mid)) {
        lo = mid;
        arg = std::move(at_mid);
      } else {
        hi = mid;
      }
    }
    b.bytes = lo + 1;
    arg.bytes = lo + 1;
    b.attained_by = std::move(arg);
  }
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return b;
}

}  // namespace dtr
