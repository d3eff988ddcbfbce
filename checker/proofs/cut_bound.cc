// The keep-or-recompute cut (see cut_bound.h) and why it is sound.
//
// Runtime facts used (simrd runtime/v2.py, RuntimeV2 family, any eviction
// script; the schedule checker, checker/proofs/schedule_checker.h, follows
// the same semantics):
//  (F1) A script evicts only at computation points; between the computation
//       of operator q and the start of the next program operator's frame only
//       get, release and pin steps run, and the only evictions there are the
//       eager ones (RuntimeV2Eager*: a storage whose last external reference
//       is released is evicted if material and not pinned). A storage's
//       references never come back once they reach zero (an argument is a
//       referenced name), so that release is its death.
//  (F2) A storage becomes material only when its root's operator is computed;
//       a tensor becomes defined only when its own operator is computed; an
//       evicted storage leaves all its tensors undefined.
//  (F3) A frame for tensor t locks, when it starts, the storages of t's
//       operator's arguments that are defined; then, in argument order, it
//       materializes each undefined argument (a nested frame) and locks it. A
//       lock is held until the frame's computation; locked storages are
//       material. So while a frame of operator c is materializing its argument
//       at position i, the storages of c's arguments at positions before the
//       first occurrence of that argument are locked ("pre-locked").
//  (F4) At every computation point (budget check) memory, which includes every
//       material storage (pinned and locked ones among them), plus the
//       operator's total output size, is at most the budget in a passing run.
//  (F5) Constants are computed once, pinned at once and never evicted; nothing
//       else is pinned before the final pins, which come after the last
//       program computation. Every computation happens in the frame of a
//       program operator or of a final pin, whose chain of pending frames is a
//       path of arguments from that root down to the computed operator.
//
// Fix a passing run at budget B. Walking the program backwards, F is a set of
// storages shown material at the computation point of the operator p (F is
// empty at the last operator). Let q = p - 1 (ops are computed in id order),
// and g the last operator before p that has a non-constant argument (the
// "charge point"; g = q unless the ops in between are *trivial*: their
// arguments are all constants, so their frames compute nothing but
// themselves).
//  (k) By (F4) at p: B >= static need of p + sizes of F outside p's arguments.
//  (a) Let D0 be the storages material at g's computation point. By (F4):
//      B >= static need of g + sizes of D0 outside pinned storages and g's
//      arguments (g's outputs are in its request, not in D0).
//  (b) The storages material when p's frame starts are D, a subset of D0 +
//      the outputs of g and of the trivial ops after it, minus storages that
//      die in between (eager runtimes): only the trivial ops compute in
//      between, and evictions only remove (F1, F2). Forced computations: p is
//      computed in its frame. If an operator c is computed in p's frame and
//      an argument a of c has a storage not in D, a was undefined when the
//      frame started (F2) and is defined at c's computation (F3), so a's
//      operator is computed in p's frame before c. Hence every operator
//      reachable from p along arguments whose storages are not in D is
//      computed in p's frame.
//  (K) A storage x in F whose root's operator is not reachable from p at all
//      (paths avoid constants and SL below, which are never requested) is not
//      computed in p's frame, so it is material throughout the frame and when
//      it starts: it is in D, hence material at q's computation point or made
//      there, and if it died after g (or after it was made) the run is
//      impossible. Such storages form K'.
//  (c) Cost of a computation of operator c in p's frame. Its pending frames
//      form a chain p = c_0, ..., c_k = c, a path of arguments (F5). Material
//      and distinct at that point: the pinned storages (constants made before
//      p); SL, the storages of p's arguments certainly defined when the frame
//      started (arguments or outputs of q that did not die in between; locked
//      by p's frame until its computation, F3); K'; c's arguments (locked); and
//      the pre-locks of the chain (F3). A pre-locked storage y is charged on a
//      path edge of operator c' only if no other operator that can pre-lock y
//      and is reachable from p can be above c' on a chain (is a descendant of
//      c' along argument edges). Of the operators of one chain that pre-lock
//      y, only the topmost can charge it, so each storage is charged at most
//      once on any chain, and the charged weight of the actual chain is at
//      most its pre-locked memory outside SL and K'; the shortest charged
//      path bounds it from below. An argument y of c may also be pre-locked
//      on the chain: its size is subtracted if some reachable operator that
//      can pre-lock y can be above c. With (F4), cost(c) =
//      pinned + |SL u K' u args(c)| + total(c) + max(0, path(c) - overlap)
//      <= B for every c computed in p's frame.
//  (r) Revival (eager runtimes). A storage x that died at step d is material
//      later only if its operator is computed after d; then each argument of
//      it that died at or before d is material at that time, so its operator
//      was computed after its own death, and so on. We only ask whether x can
//      be material at the computation point of a program operator, before
//      the final pins: a computation of c after step d and before that point
//      happens in the frame of a program operator computed after d, down a
//      path of arguments, with
//      c's arguments locked: revival(x) is the largest lower bound of those
//      computations (pinned + args + total + the cheapest globally charged
//      path from such a root, charging each storage other than c's arguments
//      only at operators that can pre-lock it and have no descendant that
//      can, so at most once on a chain). If revival(x) > B, x is never
//      material after its death.
//  (r') Where it is material again (eager runtimes). The computations between
//      x's death at step d and the computation point of a program operator g
//      happen in the frames of the program operators computed after d and
//      not after g, each down a path of arguments from that operator (F5).
//      So x is material at g's computation point only if its maker is an
//      argument-ancestor of one of them (TraceFacts::Remade).
//  (d) So, with E = {c : cost(c) > B}, no operator of E is reachable from p as
//      in (b): the storages in D cut every path from p to E in the argument
//      graph (tensors of storages in D block the path). A storage in D0 beyond
//      g's arguments costs its size in (a), one in K' is counted once in
//      (a) already, one among g's arguments or the outputs of g and the
//      trivial ops costs nothing more; one that died between g and p, or died
//      before g and cannot be revived (r) or remade by then (r'), cannot be
//      in D. A storage with n tensors in the graph is split as floor(size /
//      n) per tensor, which never charges more than its size. So B >= static need of g + |K'
//      beyond those free storages| + (minimum weighted vertex cut), a maximum
//      flow.
//  (f) A storage that every cut affordable in (d) contains is in D and costs
//      something, so it is material at q's computation point: with K' minus
//      q's outputs, it forms the F of q.
// (a), (d) and (f) hold with q in place of g as well (then only q's arguments
// and outputs are free); both are tried when they differ, if q is computed
// (a constant has no computation point).
// (P) The final pins. After the last program step the remaining names are
//     pinned in order t_1..t_n, each rematerialized first if undefined: a
//     frame of t_k's operator with its chain of frames down paths of
//     arguments, during which the storages of t_1..t_{k-1} are pinned, as
//     the arguments before position k are pre-locked in an operator's frame
//     (F3). Nothing is computed between the last program step and the first
//     pin. So the phase is walked as the frame of one more operator P, after
//     the last program step, whose arguments are t_1..t_n and which has no
//     outputs: a t_k whose storage is not material when the phase starts is
//     undefined and its operator is computed in the phase, so (b)-(f) hold
//     for P as written, except that SL is empty (a tensor defined when the
//     phase starts is not locked: an earlier pin's frame may evict it), and
//     (k) at P is the static bound's final term. F at the last operator is
//     what (f) finds for P instead of nothing. (r) asks about computation
//     points of program operators, which P's frames follow: P is no root
//     there.
// (E) The storages the final pins need, charged where they already exist.
//     H: the storages of the pinned names that are not constants and are
//     never released for the last time. Take a program operator p that is
//     not a constant and g in H made before p. g is material when it is
//     pinned, after the last program step. If g is not material at p's
//     computation point, its maker is computed after that point (F2), in
//     the frame of a program operator r > p or of a final pin (F5), with its
//     arguments material (F3). In the eager runtimes an argument y that died
//     before p's computation step is then material after its death (F1):
//     either y is material at p's computation point, or y's maker is
//     computed after that point too, and so on for its own arguments that
//     died before p. A computation of c after p's point in the frame of r
//     holds pinned_before(r), c's arguments and outputs, the charged path
//     from r down to c as in (r) (a frame of the final pins pre-locks the
//     storages of the names pinned before its own; nothing is above it on a
//     chain), and SL(r): r's arguments that are arguments or outputs of
//     r - 1 and did not die in between, locked by r's frame until r is
//     computed (F3). A pre-lock on the path may be in SL(r), so only the
//     larger of the path and SL(r) beyond c's arguments counts. late(c, p)
//     is the least of this over the roots after p; if it exceeds B, c is
//     not computed after p. So the storages material at p's computation
//     point cut every path from a storage of H made before p through makers
//     (a storage to its maker, a maker to its arguments that died before p)
//     to a maker c with late(c, p) > B. Such a storage costs its size beside
//     p's static need unless it is an argument of p or in F (counted by
//     (k)); one that died before p and cannot be revived (r) or remade by
//     then (r') cannot be material at p. So B >= static need of p + |F
//     beyond p's arguments| + (minimum vertex cut), a maximum flow; a
//     storage every affordable cut contains is material at p's computation
//     point and joins F, to be carried back as in (K). On Transformer this charges the weight
//     gradients made before the static bound's operator there.
// (C) Checkpoints. Take a program operator p and a later one q, and a
//     non-constant storage a of q's arguments made before p (not one of p's
//     arguments or outputs). A passing run has a material at q's
//     computation point (F3). Let Y be storages a = y_0, ..., y_k where each
//     y_{i+1} is an argument storage of y_i's maker and y_k's maker cannot
//     be computed within B in the frame of any program operator r with
//     p < r <= q (a lower bound as in (r): pinned_before(r) + the maker's
//     arguments and outputs + the cheapest globally charged path from r
//     exceeds B; the search below goes down through makers that can, to
//     the first that cannot). Suppose no member of Y is material at p's
//     computation point. Then one becomes material later, by a computation
//     of its maker (F2); take the first, y_i. It happens before q's
//     computation point, in the frame of a program operator r in (p, q]
//     (F5; the final pins come after q), with its arguments material (F3):
//     y_{i+1} among them if i < k, which was then neither material at p's
//     point nor made since (y_i is the first), so i = k, but y_k's maker
//     cannot be computed in any such frame within B. So some member of Y is
//     material at p's computation point. Members of pairwise disjoint
//     spans are distinct storages; none is pinned (constants are not in
//     them, nothing else is pinned before the final pins) nor one of p's
//     arguments or outputs, which p's static need counts. So B >= static
//     need of p + the sum over disjoint spans of their smallest member. It
//     uses nothing of the walk, deaths nor the runtime's eagerness; and a
//     span at B is one at every B' < B, so it refutes those too.
// (C+) Checkpoints beside a recomputation. Take a computation of an
//     operator c in the frame of a program operator r (before r's own
//     computation point), and a span Y of (C) for an argument of an
//     operator q >= r made before some r' - 1 <= r - 1, with the frames of
//     r'..q (so its last storage's maker is computed in none of r..q). Some
//     member of Y is material then: if none is, the first member made
//     afterwards is made before q's computation point, in a frame of r..q,
//     from the member after it, which was not material then and was not made
//     since; so it is the last member, which no such frame can make. At that
//     moment memory holds what (r) counts for c in r's frame (the pinned
//     storages, c's arguments and outputs, the pre-locks of the chain of
//     frames from r down to c) and one member of each of such pairwise
//     disjoint spans that has no member among those: none of c's arguments
//     or outputs, nor a storage that an operator which can be on such a
//     chain (c descends to it, it descends to r) can pre-lock. If that sum
//     exceeds B, c is not computed in r's frame: (C) then treats r's frame
//     as unable to make that storage, which only shortens its spans. The
//     inner spans are (C)'s own (each frame with (r)'s test alone), found at
//     every stride_-th operator r' and used for the frames r >= r' up to the
//     next, less those of operators before r.
// Everything used of the schedule (D0, D, the chains) ranges over all
// possibilities, so a refutation holds for every eviction script. Lowering B
// only enlarges E, the makers late(c, p) forbids, the unrevivable storages,
// the cuts and hence F: the test is monotone in B.
#include "checker/proofs/cut_bound.h"

#include <fmt/core.h>

// Boost.Graph's max-flow headers trip GCC's -Wmaybe-uninitialized (in
// Boost's own code); the warning is silenced for them alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "model/error.h"

namespace dtr {

std::string_view CutKindName(CutArgument::Kind kind) {
  switch (kind) {
    case CutArgument::Kind::kCut:
      return "cut";
    case CutArgument::Kind::kKeep:
      return "keep";
    case CutArgument::Kind::kEvicted:
      return "evicted";
    case CutArgument::Kind::kCheckpoints:
      return "checkpoints";
  }
  return "?";
}

namespace {

constexpr int64_t kInfinity = int64_t{1} << 60;

// Facts that depend on neither the frame nor the budget.
struct TraceFacts {
  std::vector<int32_t> compute_step;   // per op
  std::vector<int64_t> pinned_before;  // per op: bytes pinned before its compute step
  int64_t constant_bytes = 0;          // all constants
  std::vector<uint8_t> constant;       // per storage: made by a constant (pinned from creation)
  // Per op: the last op before it whose frame can compute anything besides
  // itself (an argument that is not a constant); -1 if none.
  std::vector<OpId> charge_point;
  std::vector<int32_t> death;          // per storage: step of its last release, -1 if none
  std::vector<OpId> maker;             // per storage: its root's operator
  // Per op: its distinct non-constant argument storages.
  std::vector<std::vector<StorageId>> arg_storages;
  // Per op and argument position: whether it is the first occurrence of a
  // non-constant tensor (an edge of the argument graph), and then the
  // storages pre-locked while it is materialized.
  std::vector<std::vector<uint8_t>> edge;
  std::vector<std::vector<std::vector<StorageId>>> prelocks;
  std::vector<std::vector<OpId>> prelockers;  // per storage: ops that can pre-lock it, ascending
  // Per op: the argument-graph edges into its outputs (consumer, position).
  std::vector<std::vector<std::pair<OpId, int32_t>>> consumers;
  // Per op, a bitset of the ops that can be above it on a chain of frames
  // (its descendants along argument-graph edges).
  size_t words = 0;
  std::vector<uint64_t> descendants;
  bool Descends(OpId from, OpId d) const {
    return descendants[from * words + d / 64] >> (d % 64) & 1;
  }
  // Whether some op that can pre-lock y (other than c, and accepted by
  // `counts`) can be above c on a chain: then c does not charge y.
  template <typename Counts>
  bool ChargedAbove(StorageId y, OpId c, Counts counts) const {
    const auto& l = prelockers[y];
    for (auto it = std::upper_bound(l.begin(), l.end(), c); it != l.end(); ++it)
      if (counts(*it) && Descends(c, *it)) return true;
    return false;
  }
  std::vector<int64_t> revival;   // per storage (eager, died): see (r); 0 if it never dies
  // Per storage (eager, died): the first op computed after its death.
  std::vector<OpId> remade_from;
  // (r') Whether x, dead before the computation point of program op c, can
  // be material there: its maker must have been computed again after the
  // death, in the frame of a program op r computed after it and not after c,
  // so down a path of arguments from r: r descends from the maker.
  bool Remade(StorageId x, OpId c) const {
    const OpId a = remade_from[x];
    if (a > c) return false;
    const uint64_t* row = descendants.data() + static_cast<size_t>(maker[x]) * words;
    for (size_t w = static_cast<size_t>(a) / 64; w <= static_cast<size_t>(c) / 64; ++w) {
      uint64_t bits = row[w];
      if (w == static_cast<size_t>(a) / 64) bits &= ~uint64_t{0} << (a % 64);
      if (w == static_cast<size_t>(c) / 64 && c % 64 != 63) bits &= (uint64_t{2} << (c % 64)) - 1;
      if (bits) return true;
    }
    return false;
  }
  // (E): the storages the final pins need (non-constant, never released
  // for the last time); for their makers and, in the eager runtimes, the
  // makers of the dead storages a late computation of them may need
  // (recursively), late_roots[c]: (r, the least pinned_before + max(charged
  // path, SL) over the roots >= r) at the roots r where that least value
  // drops, ascending. Empty for other ops, and for all if it gave up.
  std::vector<StorageId> held_at_end;
  std::vector<OpId> late_makers;  // the ops whose late_roots are computed
  std::vector<std::vector<std::pair<OpId, int64_t>>> late_roots;  // per op
  std::vector<int64_t> own;  // per op in late_roots: its argument and output bytes
  // The least memory of a computation of c in the frame of a root after p.
  int64_t LateCost(OpId c, OpId p) const {
    const auto& steps = late_roots[c];
    auto it =
        std::upper_bound(steps.begin(), steps.end(), p,
                         [](OpId q, const std::pair<OpId, int64_t>& s) { return q < s.first; });
    return it == steps.end() ? kInfinity : own[c] + it->second;
  }
  // Per storage: whether a PIN before the final pins pins it.
  std::vector<uint8_t> pinned_in_program;
  OpId final_pins = -1;           // P of (P), -1 if none
};

int64_t SizeOf(const Trace& trace, StorageId s) { return trace.storages[s].size; }

// The globally charged weight of the argument edge (consumer, pos), not
// charging `own` (the arguments of the operator at the path's end). The
// final pins P pre-lock the storages of the names pinned before position pos;
// nothing is above P on a chain, so it charges them all.
int64_t EdgeCharge(const Trace& trace, const TraceFacts& f, const std::vector<StorageId>& own,
                   OpId consumer, int32_t pos) {
  auto counts = [&](StorageId y) { return std::find(own.begin(), own.end(), y) == own.end(); };
  int64_t w = 0;
  if (consumer == f.final_pins) {
    const std::vector<TensorId>& pins = trace.ops[consumer].args;
    const StorageId pinned_now = trace.tensors[pins[pos]].storage;
    std::vector<StorageId> before;
    for (int32_t i = 0; i < pos; ++i) {
      StorageId y = trace.tensors[pins[i]].storage;
      if (!f.constant[y] && y != pinned_now) before.push_back(y);
    }
    std::sort(before.begin(), before.end());
    before.erase(std::unique(before.begin(), before.end()), before.end());
    for (StorageId y : before)
      if (counts(y)) w += SizeOf(trace, y);
    return w;
  }
  for (StorageId y : f.prelocks[consumer][pos])
    if (!f.ChargedAbove(y, consumer, [](OpId) { return true; }) && counts(y)) w += SizeOf(trace, y);
  return w;
}

// The cheapest globally charged path from each root (an operator whose frame
// can compute c: c's descendants along argument edges, c itself, and P if
// `with_pins`) down to c, not charging c's own arguments (counted with c).
// Stops at the first root >= `stop_at` popped (-1: never), whose distance is
// then the least of any root >= stop_at. Paths longer than `limit` are not
// followed. With `pops`, counts the queue's pops there and gives up (false)
// before pop number max_pops + 1, leaving `best` partial.
struct PathLimits {
  int64_t limit = kInfinity;
  int64_t max_pops = std::numeric_limits<int64_t>::max();
  int64_t* pops = nullptr;
};
bool ChargedPaths(const Trace& trace, const TraceFacts& f, OpId c, bool with_pins, OpId stop_at,
                  int64_t* stopped, std::unordered_map<OpId, int64_t>& best,
                  const PathLimits& limits) {
  const std::vector<StorageId>& own = f.arg_storages[c];
  using Item = std::pair<int64_t, OpId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  best.clear();
  queue.emplace(0, c);
  best[c] = 0;
  int64_t popped = 0;
  while (!queue.empty()) {
    if (limits.pops && ++popped > limits.max_pops) return false;
    auto [d, u] = queue.top();
    queue.pop();
    if (limits.pops) ++*limits.pops;
    if (d > best[u]) continue;
    if (stop_at >= 0 && u >= stop_at && (with_pins || u != f.final_pins)) {
      *stopped = d;
      return true;
    }
    for (auto [consumer, pos] : f.consumers[u]) {
      if (consumer == f.final_pins && !with_pins) continue;  // no root, and it computes nothing
      int64_t nd = d + EdgeCharge(trace, f, own, consumer, pos);
      if (nd > limits.limit) continue;
      auto it = best.find(consumer);
      if (it == best.end() || nd < it->second) {
        best[consumer] = nd;
        queue.emplace(nd, consumer);
      }
    }
  }
  return true;
}
std::unordered_map<OpId, int64_t> ChargedPaths(const Trace& trace, const TraceFacts& f, OpId c,
                                               bool with_pins, OpId stop_at, int64_t* stopped) {
  std::unordered_map<OpId, int64_t> best;
  ChargedPaths(trace, f, c, with_pins, stop_at, stopped, best, PathLimits{});
  return best;
}

// The cheapest globally charged path from a program operator computed after
// `after_op` (an op >= after_op) down to c, not charging c's own arguments
// (counted with c); kInfinity if there is none.
int64_t PathFromLaterRoot(const Trace& trace, const TraceFacts& f, OpId c, OpId after_op) {
  int64_t d = kInfinity;
  ChargedPaths(trace, f, c, /*with_pins=*/false, after_op, &d);
  return d;
}

// Appends the operator P of (P) to a copy of the trace: its arguments are
// the targets of the pins that end the program, its compute step comes just
// before them. Returns its id, or -1 if the program does not end in a pin.
OpId AddFinalPins(Trace& trace) {
  size_t first = trace.program.size();
  while (first > 0 && trace.program[first - 1].kind == StepKind::kPin) --first;
  if (first == trace.program.size()) return -1;
  Operator pins;
  pins.name = "the final pins";
  for (size_t i = first; i < trace.program.size(); ++i) pins.args.push_back(trace.program[i].target);
  pins.first_output = static_cast<TensorId>(trace.tensors.size());
  pins.line = trace.program.back().line;
  const OpId id = static_cast<OpId>(trace.ops.size());
  trace.ops.push_back(std::move(pins));
  trace.program.insert(trace.program.begin() + static_cast<std::ptrdiff_t>(first),
                       Step{StepKind::kCompute, id, trace.program.back().line});
  return id;
}

TraceFacts Gather(const Trace& trace, OpId final_pins, bool eager) {
  TraceFacts f;
  f.final_pins = final_pins;
  const size_t nops = trace.ops.size(), nst = trace.storages.size();
  f.compute_step.assign(nops, -1);
  f.pinned_before.assign(nops, 0);
  f.constant.assign(nst, 0);
  f.maker.assign(nst, 0);
  f.death.assign(nst, -1);
  for (StorageId s = 0; s < static_cast<StorageId>(nst); ++s) {
    f.maker[s] = trace.tensors[trace.storages[s].root].op;
    f.constant[s] = trace.ops[f.maker[s]].is_constant;
    if (f.constant[s]) f.constant_bytes += SizeOf(trace, s);
  }
  std::vector<uint8_t> pinned(nst, 0);
  f.pinned_in_program.assign(nst, 0);
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
        if (--refs[s] == 0 && !pinned[s]) f.death[s] = step;
        break;
      }
      case StepKind::kPin: {
        StorageId s = trace.tensors[st.target].storage;
        if (final_pins < 0 || step < f.compute_step[final_pins]) f.pinned_in_program[s] = 1;
        if (!pinned[s]) {
          pinned[s] = 1;
          pinned_bytes += SizeOf(trace, s);
        }
        break;
      }
    }
  }
  f.prelockers.resize(nst);
  f.arg_storages.resize(nops);
  f.prelocks.resize(nops);
  f.edge.resize(nops);
  f.consumers.resize(nops);
  for (OpId c = 0; c < static_cast<OpId>(nops); ++c) {
    const Operator& op = trace.ops[c];
    auto& pre = f.prelocks[c];
    pre.resize(op.args.size());
    f.edge[c].assign(op.args.size(), 0);
    // P's pre-locks at position i are all the storages of its arguments
    // before i (each pin holds the earlier ones): not stored, the walk sums
    // them as it goes (Walk::Costs), and P can pre-lock all but the last.
    const bool pins = c == final_pins;
    std::vector<StorageId> seen, can;
    std::vector<uint8_t> in_seen(pins ? nst : 0, 0), tensor_seen(pins ? trace.tensors.size() : 0, 0);
    size_t prelockable = 0;
    for (size_t i = 0; i < op.args.size(); ++i) {
      StorageId s = trace.tensors[op.args[i]].storage;
      bool first = pins ? !tensor_seen[op.args[i]]
                        : std::find(op.args.begin(), op.args.begin() + i, op.args[i]) ==
                              op.args.begin() + i;
      if (pins) tensor_seen[op.args[i]] = 1;
      if (first && !f.constant[s]) {
        f.edge[c][i] = 1;
        if (pins) {
          prelockable = seen.size();
        } else {
          pre[i] = seen;
          can.insert(can.end(), seen.begin(), seen.end());
        }
        f.consumers[trace.tensors[op.args[i]].op].emplace_back(c, static_cast<int32_t>(i));
      }
      if (!f.constant[s] && (pins ? !in_seen[s]
                                  : std::find(seen.begin(), seen.end(), s) == seen.end())) {
        seen.push_back(s);
        if (pins) in_seen[s] = 1;
      }
    }
    if (pins) can.assign(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(prelockable));
    f.arg_storages[c] = seen;
    std::sort(can.begin(), can.end());
    can.erase(std::unique(can.begin(), can.end()), can.end());
    for (StorageId y : can) f.prelockers[y].push_back(c);  // c ascends: lists stay sorted
  }
  f.charge_point.assign(nops, -1);
  for (OpId c = 1; c < static_cast<OpId>(nops); ++c)
    f.charge_point[c] = f.arg_storages[c - 1].empty() ? f.charge_point[c - 1] : c - 1;
  f.words = (nops + 63) / 64;
  f.descendants.assign(nops * f.words, 0);
  for (OpId c = static_cast<OpId>(nops) - 1; c >= 0; --c)
    for (auto [consumer, pos] : f.consumers[c]) {
      f.descendants[c * f.words + consumer / 64] |= uint64_t{1} << (consumer % 64);
      for (size_t w = 0; w < f.words; ++w)
        f.descendants[c * f.words + w] |= f.descendants[consumer * f.words + w];
    }
  // (r): revival, by maker id (a storage's arguments' storages come first).
  f.revival.assign(nst, 0);
  f.remade_from.assign(nst, 0);
  if (!eager) return f;
  std::vector<StorageId> order(nst);
  for (StorageId s = 0; s < static_cast<StorageId>(nst); ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(),
                   [&](StorageId a, StorageId b) { return f.maker[a] < f.maker[b]; });
  for (StorageId x : order) {
    if (f.death[x] < 0) continue;
    const OpId c = f.maker[x];
    // The first op computed after the death (ops are computed in id order).
    OpId after = static_cast<OpId>(
        std::upper_bound(f.compute_step.begin(), f.compute_step.end(), f.death[x]) -
        f.compute_step.begin());
    f.remade_from[x] = after;
    int64_t pinned = after < static_cast<OpId>(nops) ? f.pinned_before[after] : f.constant_bytes;
    int64_t path = PathFromLaterRoot(trace, f, c, after);
    int64_t need = kInfinity;
    if (path < kInfinity) {
      int64_t args = 0;
      for (StorageId y : f.arg_storages[c]) args += SizeOf(trace, y);
      need = pinned + args + trace.ops[c].total_size + path;
    }
    for (StorageId y : f.arg_storages[c])
      if (f.death[y] >= 0 && f.death[y] <= f.death[x]) need = std::max(need, f.revival[y]);
    f.revival[x] = need;
  }
  return f;
}

// (E): the held storages, and the cost of computing after an op each maker a
// late recomputation of them may need. Gives up (nothing held) past a work
// limit on the Dijkstra pops, the same on any machine.
void GatherLateNeeds(const Trace& trace, TraceFacts& f, bool eager) {
  constexpr int64_t kMaxPops = 20'000'000;
  if (f.final_pins < 0) return;
  const size_t nst = trace.storages.size(), nops = trace.ops.size();
  std::vector<uint8_t> want(nst, 0);
  std::vector<StorageId> held, needed;
  for (TensorId t : trace.ops[f.final_pins].args) {
    StorageId g = trace.tensors[t].storage;
    if (want[g] || f.constant[g] || f.death[g] >= 0) continue;
    want[g] = 1;
    held.push_back(g);
  }
  std::vector<StorageId> stack(held);
  while (!stack.empty()) {
    StorageId x = stack.back();
    stack.pop_back();
    needed.push_back(x);
    if (!eager) continue;
    for (StorageId y : f.arg_storages[f.maker[x]])
      if (!want[y] && f.death[y] >= 0) {
        want[y] = 1;
        stack.push_back(y);
      }
  }
  // SL(r) of (c) for each program op r: its arguments that are arguments or
  // outputs of r - 1 and not released for the last time in between (eager),
  // defined when r's frame starts and locked until r is computed.
  std::vector<std::vector<StorageId>> locked(nops);
  for (OpId r = 1; r < static_cast<OpId>(nops); ++r) {
    if (r == f.final_pins || trace.ops[r].is_constant) continue;
    const Operator& q = trace.ops[r - 1];
    std::vector<TensorId> certain(q.args.begin(), q.args.end());
    for (int32_t i = 0; i < q.num_outputs; ++i) certain.push_back(q.first_output + i);
    for (TensorId a : trace.ops[r].args) {
      const StorageId y = trace.tensors[a].storage;
      if (f.constant[y] || std::find(certain.begin(), certain.end(), a) == certain.end()) continue;
      if (eager && f.death[y] > f.compute_step[r - 1] && f.death[y] < f.compute_step[r]) continue;
      if (std::find(locked[r].begin(), locked[r].end(), y) == locked[r].end())
        locked[r].push_back(y);
    }
  }
  std::vector<std::vector<std::pair<OpId, int64_t>>> late_roots(nops);
  std::vector<int64_t> own(nops, 0);
  std::vector<uint8_t> done(nops, 0);
  std::vector<OpId> makers;
  int64_t pops = 0;
  for (StorageId x : needed) {
    const OpId c = f.maker[x];
    if (done[c]) continue;
    done[c] = 1;
    makers.push_back(c);
    for (StorageId y : f.arg_storages[c]) own[c] += SizeOf(trace, y);
    own[c] += trace.ops[c].total_size;
    int64_t unused = 0;
    std::unordered_map<OpId, int64_t> paths = ChargedPaths(trace, f, c, true, -1, &unused);
    pops += static_cast<int64_t>(paths.size());
    if (pops > kMaxPops) return;
    std::vector<std::pair<OpId, int64_t>> at;
    for (auto [r, d] : paths) {
      if (r == c || trace.ops[r].is_constant) continue;
      // r's frame holds SL(r) locked as well; a pre-lock on the path may be
      // one of them, so the larger of the two counts.
      int64_t sl = 0;
      for (StorageId y : locked[r])
        if (std::find(f.arg_storages[c].begin(), f.arg_storages[c].end(), y) ==
            f.arg_storages[c].end())
          sl += SizeOf(trace, y);
      at.emplace_back(r, f.pinned_before[r] + std::max(d, sl));
    }
    std::sort(at.begin(), at.end());
    std::vector<std::pair<OpId, int64_t>>& steps = late_roots[c];
    int64_t least = kInfinity;
    for (size_t i = at.size(); i-- > 0;)
      if (at[i].second < least) {
        least = at[i].second;
        steps.emplace_back(at[i].first, least);
      }
    std::reverse(steps.begin(), steps.end());
  }
  f.held_at_end = std::move(held);
  f.late_makers = std::move(makers);
  f.late_roots = std::move(late_roots);
  f.own = std::move(own);
}

// (C): the spans at the candidate operators, at one budget at a time.
// Counts bound every search (the same answers on any machine): a storage
// whose roots are not all found counts as computable in every frame, a
// span not found is not charged, and past kMaxWork steps of the searches
// for one budget no more spans are sought; all only weaken the argument
// (on a generated RNN of 30,000 operators the roots' searches alone took
// 253 million steps at one budget, 25 s; at the LSTM's bound the argument
// takes 6.5 million).
class Spans {
 public:
  Spans(const Trace& trace, const TraceFacts& f, const MemoryBound& static_bound,
        int32_t candidates)
      : trace_(trace),
        f_(f),
        static_(static_bound),
        blocked_(trace.storages.size(), 0),
        parent_(trace.storages.size(), kUnseen) {
    for (OpId p = 0; p < static_cast<OpId>(trace.ops.size()); ++p)
      if (p != f.final_pins && !trace.ops[p].is_constant && f.compute_step[p] >= 0 &&
          !f.arg_storages[p].empty())
        ops_.push_back(p);
    std::stable_sort(ops_.begin(), ops_.end(), [&](OpId a, OpId b) { return Need(a) > Need(b); });
    if (ops_.size() > static_cast<size_t>(std::max(0, candidates))) ops_.resize(candidates);
    stride_ = std::max<OpId>(1, static_cast<OpId>(trace.ops.size()) / 128);
  }

  // With `inner`, a frame computes a storage's maker only if it can hold,
  // beside that computation, the spans the inner argument finds for the
  // operators after it (C+ in the comment at the top); `inner` itself uses
  // the plain test. It must be built on the same trace and facts.
  void SetInner(Spans* inner) { inner_ = inner; }

  bool Refutes(int64_t budget, CutArgument* why) {
    Reset(budget);
    for (OpId p : ops_) {
      if (work_ > kMaxWork) break;
      if (Need(p) > budget) continue;  // the static bound's, not ours
      CutArgument arg;
      const int64_t charge = ChargeAt(p, why ? &arg : nullptr);
      if (Need(p) + charge <= budget) continue;
      if (why) {
        arg.kind = CutArgument::Kind::kCheckpoints;
        arg.op = p;
        arg.budget = budget;
        arg.need = Need(p);
        arg.cut = charge;
        *why = std::move(arg);
      }
      return true;
    }
    return false;
  }

 private:
  int64_t Need(OpId p) const { return static_.per_op[p].total(); }

  // The bytes the disjoint spans of the operators after p charge beside
  // p's static need, found greedily: later operators' arguments in program
  // order, each span avoiding the storages of the spans taken and p's
  // arguments and outputs.
  int64_t ChargeAt(OpId p, CutArgument* arg) {
    const OpId n = static_cast<OpId>(trace_.ops.size());
    std::vector<StorageId> blocked;
    auto block = [&](StorageId y) {
      if (!blocked_[y]) {
        blocked_[y] = 1;
        blocked.push_back(y);
      }
    };
    for (StorageId y : f_.arg_storages[p]) block(y);
    const Operator& op = trace_.ops[p];
    for (int32_t i = 0; i < op.num_outputs; ++i) block(trace_.tensors[op.first_output + i].storage);
    int64_t charge = 0;
    std::vector<StorageId> span;
    for (OpId q = p + 1; q < n; ++q) {
      if (q == f_.final_pins || trace_.ops[q].is_constant || f_.compute_step[q] < 0) continue;
      if (work_ > kMaxWork) break;
      for (StorageId a : f_.arg_storages[q]) {
        if (f_.maker[a] >= p || blocked_[a]) continue;
        const size_t searched = blocked.size();
        if (!Find(a, p, q, span, blocked)) {
          // Find marked what it searched in vain: blocked for later q too.
          for (size_t i = searched; i < blocked.size(); ++i) blocked_[blocked[i]] = 1;
          continue;
        }
        StorageId least = span.front();
        for (StorageId y : span) {
          if (SizeOf(trace_, y) < SizeOf(trace_, least)) least = y;
          block(y);
        }
        charge += SizeOf(trace_, least);
        if (arg) {
          arg->cut_storages.push_back(least);
          arg->span_ops.push_back(q);
          arg->spans.push_back(span);
        }
      }
    }
    for (StorageId y : blocked) blocked_[y] = 0;
    return charge;
  }

  // A span for (p, q, a) into `span` (a first), avoiding blocked
  // storages: a path of arguments through storages whose makers some frame
  // in (p, q] can compute within the budget, to one whose maker none can;
  // of those, one with the fewest storages (a breadth-first search: short
  // spans leave room for more; on the LSTM this proves 0.062 where the
  // spans whose smallest storage is largest prove 0.059). If the search
  // runs out of storages, every storage it met leads only to blocked
  // storages, constants or storages some frame in (p, q] can make from
  // them: for later q too, as the frames and the blocked storages only
  // grow. They are appended to `dead` then.
  bool Find(StorageId a, OpId p, OpId q, std::vector<StorageId>& span,
            std::vector<StorageId>& dead) {
    constexpr size_t kMaxVisits = 20000;
    span.clear();
    std::vector<StorageId>& order = order_;  // the search, breadth first
    order.clear();
    auto visit = [&](StorageId y, StorageId from) {
      if (parent_[y] != kUnseen || blocked_[y]) return;
      parent_[y] = from;
      order.push_back(y);
    };
    visit(a, a);
    StorageId found = -1;
    size_t next = 0;
    for (; next < order.size() && next < kMaxVisits && work_ <= kMaxWork; ++next) {
      const StorageId y = order[next];
      ++work_;
      if (!ComputableIn(y, p, q)) {
        found = y;
        break;
      }
      for (StorageId x : f_.arg_storages[f_.maker[y]]) visit(x, y);
    }
    if (found >= 0)
      for (StorageId y = found;; y = parent_[y]) {
        span.push_back(y);
        if (y == a) break;
      }
    std::reverse(span.begin(), span.end());
    for (StorageId y : order) parent_[y] = kUnseen;
    if (found < 0 && next == order.size()) dead.insert(dead.end(), order.begin(), order.end());
    return found >= 0;
  }

  // Whether y's maker may be computed within the budget in the frame of a
  // program operator r with p < r <= q (with an inner argument, also beside
  // its spans there: FitsBeside).
  bool ComputableIn(StorageId y, OpId p, OpId q) {
    Roots& r = RootsOf(y);
    if (r.all) return true;
    for (auto it = std::upper_bound(r.ops.begin(), r.ops.end(), p); it != r.ops.end() && *it <= q;
         ++it) {
      const size_t i = it - r.ops.begin();
      if (!inner_) return true;
      if (r.fits[i] < 0) r.fits[i] = FitsBeside(f_.maker[y], *it, r.need[i]);
      if (r.fits[i]) return true;
    }
    return false;
  }

  void Reset(int64_t budget) {
    budget_ = budget;
    roots_.clear();
    families_.clear();
    work_ = 0;
    if (inner_) inner_->Reset(budget);
  }

  // (C+): whether a computation of c, needing `need` bytes in the frame of
  // r by the plain test, can also hold one member of each inner span at r
  // that has no member the plain test counts: c's arguments and outputs,
  // and the storages an operator that can be on a chain of frames from r
  // down to c can pre-lock. The spans are those found at the last multiple
  // r' <= r of stride_ (spans for operators from r' on, with the frames
  // from r' on), less those for operators before r.
  bool FitsBeside(OpId c, OpId r, int64_t need) {
    if (work_ > kMaxWork) return true;  // past the work limit: the plain test
    const Family& family = FamilyAt(r / stride_ * stride_);
    auto counted = [&](StorageId y) {
      const auto& args = f_.arg_storages[c];
      if (std::find(args.begin(), args.end(), y) != args.end()) return true;
      if (f_.maker[y] == c) return true;  // an output (a span member is a root's storage)
      for (OpId o : f_.prelockers[y])
        if (o != c && o <= r && f_.Descends(c, o) && (o == r || f_.Descends(o, r))) return true;
      return false;
    };
    int64_t held = 0;
    for (size_t k = 0; k < family.spans.size(); ++k) {
      if (family.ops[k] < r) continue;  // computed before r's frame
      ++work_;
      bool disjoint = true;
      // Only an operator in [c, r] that uses a member (or makes it) can
      // count it: most spans have none.
      const std::vector<OpId>& touch = family.touch[k];
      auto it = std::lower_bound(touch.begin(), touch.end(), c);
      if (it != touch.end() && *it <= r)
        for (StorageId y : family.spans[k]) {
          ++work_;
          if (counted(y)) {
            disjoint = false;
            break;
          }
        }
      if (disjoint) held += family.least[k];
    }
    return need + held <= budget_;
  }

  // The inner argument's spans at r (its ChargeAt(r - 1)): for operators
  // q >= r, arguments made before r - 1, with the frames from r to q.
  struct Family {
    std::vector<std::vector<StorageId>> spans;
    std::vector<int64_t> least;
    std::vector<OpId> ops;                 // per span: the operator whose argument it holds
    std::vector<std::vector<OpId>> touch;  // per span: its makers and users, ascending
  };
  const Family& FamilyAt(OpId r) {
    auto found = families_.find(r);
    if (found != families_.end()) return found->second;
    Family& out = families_[r];
    if (r < 1) return out;
    if (inner_->work_ > kMaxWork) return out;
    CutArgument arg;
    inner_->ChargeAt(r - 1, &arg);
    out.spans = std::move(arg.spans);
    out.ops = std::move(arg.span_ops);
    for (StorageId y : arg.cut_storages) out.least.push_back(SizeOf(trace_, y));
    if (users_.empty()) {
      users_.resize(trace_.storages.size());
      for (OpId o = 0; o < static_cast<OpId>(trace_.ops.size()); ++o)
        for (StorageId y : f_.arg_storages[o]) users_[y].push_back(o);
    }
    for (const auto& span : out.spans) {
      std::vector<OpId>& touch = out.touch.emplace_back();
      for (StorageId y : span) {
        touch.push_back(f_.maker[y]);
        touch.insert(touch.end(), users_[y].begin(), users_[y].end());
      }
      std::sort(touch.begin(), touch.end());
      touch.erase(std::unique(touch.begin(), touch.end()), touch.end());
    }
    return out;
  }

  // The program operators in whose frames y's maker may be computed within
  // the budget (lower bound as in (r)), ascending; `all` if the search gave
  // up (then every frame counts). need: that lower bound per root; fits:
  // whether it also fits beside the inner spans (-1: not asked yet).
  struct Roots {
    bool all = false;
    std::vector<OpId> ops;
    std::vector<int64_t> need;
    std::vector<int8_t> fits;
  };
  Roots& RootsOf(StorageId y) {
    constexpr int64_t kMaxPops = 200000;
    auto found = roots_.find(y);
    if (found != roots_.end()) return found->second;
    Roots& out = roots_[y];
    if (work_ > kMaxWork) {  // not searched: every frame counts
      out.all = true;
      return out;
    }
    const OpId c = f_.maker[y];
    const std::vector<StorageId>& own = f_.arg_storages[c];
    int64_t base = trace_.ops[c].total_size;
    for (StorageId x : own) base += SizeOf(trace_, x);
    // Roots come after c, so pinned_before[c] is the least they hold pinned.
    const int64_t slack = budget_ - base - f_.pinned_before[c];
    if (slack < 0) return out;
    // The searches' pops count toward work_; past kMaxPops for this storage,
    // or kMaxWork in all, it gives up.
    PathLimits limits;
    limits.limit = slack;
    limits.max_pops = std::min<int64_t>(kMaxPops, kMaxWork - work_ + 1);
    limits.pops = &work_;
    int64_t unused = 0;
    std::unordered_map<OpId, int64_t> paths;
    if (!ChargedPaths(trace_, f_, c, /*with_pins=*/false, -1, &unused, paths, limits)) {
      out.all = true;
      return out;
    }
    std::vector<std::pair<OpId, int64_t>> affordable;
    for (auto [u, d] : paths)
      if (u != c && f_.compute_step[u] >= 0 && !trace_.ops[u].is_constant &&
          base + f_.pinned_before[u] + d <= budget_)
        affordable.emplace_back(u, base + f_.pinned_before[u] + d);
    std::sort(affordable.begin(), affordable.end());
    for (auto [u, need] : affordable) {
      out.ops.push_back(u);
      out.need.push_back(need);
    }
    out.fits.assign(out.ops.size(), -1);
    return out;
  }

  static constexpr StorageId kUnseen = -1;
  static constexpr int64_t kMaxWork = 30'000'000;
  const Trace& trace_;
  const TraceFacts& f_;
  const MemoryBound& static_;
  std::vector<OpId> ops_;  // the candidates, largest static need first
  // FitsBeside reads the spans at every stride_-th operator only (about 128
  // in all): a family found at r' serves the frames after it.
  OpId stride_ = 1;
  int64_t budget_ = 0;
  int64_t work_ = 0;                            // search steps at budget_
  std::unordered_map<StorageId, Roots> roots_;  // at budget_
  Spans* inner_ = nullptr;                      // SetInner
  std::vector<std::vector<OpId>> users_;        // per storage: the ops taking it (FamilyAt)
  std::unordered_map<OpId, Family> families_;   // FamilyAt, at budget_
  std::vector<uint8_t> blocked_;                // ChargeAt: taken, p's, or searched in vain
  std::vector<StorageId> parent_;               // Find's search tree
  std::vector<StorageId> order_;                // Find's storages, in the order met
};

// A maximum flow network with int64 capacities (Boost.Graph's
// Boykov-Kolmogorov: the cuts here are small, found in few augmentations).
// The edges are collected, then laid out once as a compressed sparse row
// graph with their numbers in flat arrays: a walk builds thousands of these
// networks, and an adjacency list allocates for every edge.
class FlowNetwork {
 public:
  using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
  using Edge = size_t;  // what Add returns: the edge's number in insertion order

  explicit FlowNetwork(size_t vertices) : vertices_(vertices) {}

  // An edge and its reverse (capacity 0). Edges can no longer be added once
  // MaxFlow has run.
  Edge Add(size_t from, size_t to, int64_t capacity) {
    if (built_) throw std::logic_error("FlowNetwork::Add after MaxFlow");
    const Edge e = ends_.size();
    ends_.emplace_back(from, to);
    ends_.emplace_back(to, from);
    capacity_.push_back(capacity);
    capacity_.push_back(0);
    return e;
  }
  int64_t capacity(Edge e) const { return capacity_[e]; }
  void SetCapacity(Edge e, int64_t capacity) { capacity_[e] = capacity; }
  int64_t MaxFlow(size_t source, size_t sink) {
    if (!built_) Build();
    // capacity_ is in insertion order; the graph's edges are in row order.
    for (size_t e = 0; e < capacity_.size(); ++e) row_capacity_[row_of_[e]] = capacity_[e];
    color_.assign(vertices_, boost::white_color);
    predecessor_.assign(vertices_, Graph::edge_descriptor());
    distance_.assign(vertices_, 0);
    auto index = boost::get(boost::vertex_index, g_);
    auto edge_index = boost::get(boost::edge_index, g_);
    return boost::boykov_kolmogorov_max_flow(
        g_, boost::make_iterator_property_map(row_capacity_.begin(), edge_index),
        boost::make_iterator_property_map(residual_.begin(), edge_index),
        boost::make_iterator_property_map(reverse_.begin(), edge_index),
        boost::make_iterator_property_map(predecessor_.begin(), index),
        boost::make_iterator_property_map(color_.begin(), index),
        boost::make_iterator_property_map(distance_.begin(), index), index, source, sink);
  }
  // After MaxFlow: the vertices reachable from `source` in the residual graph.
  std::vector<uint8_t> SourceSide(size_t source) const {
    std::vector<uint8_t> seen(vertices_, 0);
    std::vector<size_t> stack{source};
    seen[source] = 1;
    while (!stack.empty()) {
      size_t v = stack.back();
      stack.pop_back();
      for (auto [e, end] = boost::out_edges(v, g_); e != end; ++e) {
        size_t w = boost::target(*e, g_);
        if (!seen[w] && residual_[boost::get(boost::edge_index, g_, *e)] > 0) {
          seen[w] = 1;
          stack.push_back(w);
        }
      }
    }
    return seen;
  }

 private:
  // Sorts the edges by source (stable), builds the graph in that order, and
  // pairs each edge with its reverse.
  void Build() {
    built_ = true;
    const size_t m = ends_.size();
    std::vector<size_t> start(vertices_ + 1, 0);
    for (const auto& [from, to] : ends_) ++start[from + 1];
    for (size_t v = 0; v < vertices_; ++v) start[v + 1] += start[v];
    row_of_.resize(m);
    std::vector<std::pair<size_t, size_t>> rows(m);
    for (size_t e = 0; e < m; ++e) {
      row_of_[e] = start[ends_[e].first]++;
      rows[row_of_[e]] = ends_[e];
    }
    g_ = Graph(boost::edges_are_sorted, rows.begin(), rows.end(), vertices_);
    std::vector<Graph::edge_descriptor> by_row(m);
    for (auto [e, end] = boost::edges(g_); e != end; ++e)
      by_row[boost::get(boost::edge_index, g_, *e)] = *e;
    reverse_.resize(m);
    for (size_t e = 0; e < m; ++e) reverse_[row_of_[e]] = by_row[row_of_[e ^ 1]];
    row_capacity_.resize(m);
    residual_.resize(m);
  }

  size_t vertices_;
  bool built_ = false;
  std::vector<std::pair<size_t, size_t>> ends_;  // insertion order: edge 2k, its reverse 2k + 1
  std::vector<int64_t> capacity_;                // insertion order
  std::vector<size_t> row_of_;                   // insertion order -> the graph's edge index
  Graph g_;
  std::vector<int64_t> row_capacity_, residual_;  // by the graph's edge index
  std::vector<Graph::edge_descriptor> reverse_;
  std::vector<boost::default_color_type> color_;
  std::vector<Graph::edge_descriptor> predecessor_;
  std::vector<int64_t> distance_;
};

// One test of the argument at a budget: the backward walk.
class Walk {
 public:
  Walk(const Trace& trace, const TraceFacts& facts, const MemoryBound& static_bound,
       OpId final_pins, const CutOptions& options)
      : trace_(trace),
        f_(facts),
        static_(static_bound),
        final_pins_(final_pins),
        eager_(options.eager),
        held_to_end_(options.held_to_end),
        stacked_(options.stacked),
        remade_(options.remade),
        nst_(trace.storages.size()),
        reached_(trace.ops.size(), 0),
        dist_(trace.ops.size(), kInfinity),
        in_graph_(trace.tensors.size(), 0),
        locked_tensor_(trace.tensors.size(), 0),
        mark_(nst_, 0),
        op_pos_(trace.ops.size(), -1),
        tensor_pos_(trace.tensors.size(), -1),
        per_storage_(nst_, 0),
        end_pos_(nst_, -1) {}

  // Walks the last `depth` operators only (all of them when depth is at
  // least their number): the same steps as the whole walk, in the same
  // order, so a refutation found is one of the whole walk's. refuted_at():
  // the operator whose frame refuted.
  bool Refutes(int64_t budget, CutArgument* why, OpId depth = std::numeric_limits<OpId>::max()) {
    budget_ = budget;
    const OpId n = static_cast<OpId>(trace_.ops.size());
    const OpId stop = depth >= n ? 0 : n - depth;
    // (E) has nothing to cut before the first op after which some maker it
    // may need is too expensive to compute; past a work limit on its
    // networks it stops for this budget (weaker, still sound), the same on
    // any machine.
    end_from_ = std::numeric_limits<OpId>::max();
    end_work_ = 0;
    // (Makers that a computation cannot afford beside the held storages,
    // (E'), count as too expensive here.)
    int64_t held = 0;
    if (stacked_)
      for (StorageId g : f_.held_at_end) held += size(g);
    for (OpId c : f_.late_makers) {
      const auto& steps = f_.late_roots[c];
      size_t k = 0;
      while (k < steps.size() && f_.own[c] + steps[k].second <= budget - held) ++k;
      end_from_ = std::min(end_from_, k == 0 ? c + 1 : steps[k - 1].first);
    }
    std::vector<StorageId> kept;  // F: material at the current op's computation point
    std::vector<OpId> since;
    for (OpId p = n - 1; p >= stop; --p) {
      refuted_at_ = p;
      if (Keep(p, kept, since, why)) return Refuted(why);
      if (EndCut(p, kept, since, why)) return Refuted(why);
      if (p == 0) break;
      std::vector<StorageId> next;
      std::vector<OpId> next_since;
      if (Frame(p, kept, since, next, next_since, why)) return Refuted(why);
      kept = std::move(next);
      since = std::move(next_since);
    }
    return false;
  }
  OpId refuted_at() const { return refuted_at_; }

 private:
  StorageId storage(TensorId t) const { return trace_.tensors[t].storage; }
  int64_t size(StorageId s) const { return trace_.storages[s].size; }

  // Names P as kFinalPins for callers, who see the trace without it.
  bool Refuted(CutArgument* why) const {
    if (why && final_pins_ >= 0) {
      if (why->op == final_pins_) why->op = kFinalPins;
      for (OpId& o : why->kept_since)
        if (o == final_pins_) o = kFinalPins;
    }
    return true;
  }

  // (E) at p's computation point: the storages the final pins need, made
  // before p, against their recomputation after p. Refutes, or adds to F
  // (`kept`) the storages every affordable cut contains.
  bool EndCut(OpId p, std::vector<StorageId>& kept, std::vector<OpId>& since, CutArgument* why) {
    constexpr int64_t kMaxWork = 50'000'000;  // network vertices and edges per budget
    if (!held_to_end_ || f_.held_at_end.empty() || p == final_pins_ || trace_.ops[p].is_constant ||
        p < end_from_ || end_work_ > kMaxWork)
      return false;
    const int32_t step = f_.compute_step[p];
    // Whatever the cut, it costs at most H made before p: if even that fits,
    // nothing is refuted here (and nothing is added to F: weaker, sound).
    const int64_t need = static_.per_op[p].total();
    int64_t held = 0;  // H made before p
    for (StorageId g : f_.held_at_end)
      if (f_.maker[g] < p) held += size(g);
    int64_t most = need + held;
    for (StorageId s : kept) most += size(s);
    if (most <= budget_) return false;
    // The network: storages (in/out vertex pairs) reached from the held ones
    // through makers that a computation after p could afford, and those
    // makers; a maker it could not afford leads to the sink.
    std::vector<StorageId> nodes, stack;
    std::vector<OpId> makers;
    auto reach = [&](StorageId x) {
      if (end_pos_[x] >= 0) return;
      end_pos_[x] = static_cast<int32_t>(nodes.size());
      nodes.push_back(x);
      stack.push_back(x);
    };
    for (StorageId g : f_.held_at_end)
      if (f_.maker[g] < p) reach(g);
    while (!stack.empty()) {
      const OpId c = f_.maker[stack.back()];
      stack.pop_back();
      ++end_work_;
      if (op_pos_[c] >= 0) continue;
      op_pos_[c] = static_cast<int32_t>(makers.size());
      makers.push_back(c);
      if (f_.LateCost(c, p) > budget_) continue;
      if (eager_)
        for (StorageId y : f_.arg_storages[c]) {
          ++end_work_;
          if (f_.death[y] >= 0 && f_.death[y] < step) reach(y);
        }
    }
    auto reset = [&] {
      for (StorageId x : nodes) end_pos_[x] = -1;
      for (OpId c : makers) op_pos_[c] = -1;
    };
    // The makers no computation after p can afford: alone (LateCost), or
    // (E') beside what must be material then. Let Y be a set of makers and
    // t the last computation after p of a maker c in Y, if any. After t no
    // maker of Y is computed, so every storage of H made before p is, at t,
    // material or made again later along a way of the network below that
    // reaches no maker of Y: what is material at t cuts those ways (sinks:
    // the makers of Y and the unaffordable ones). Beside c's arguments and
    // outputs and the pinned storages (cutting for free), that cut is
    // material at t: memory then is at least c's own bytes (Unpinned) + the
    // bytes pinned after p + the cut, as well as LateCost. So if that exceeds B
    // for every c in Y, no maker of Y is computed after p. Y starts from
    // the makers where the cut could tip it (H bytes would) and loses those
    // where it does not, until none does: the set that remains has the
    // property, and its makers join the sinks of the cut at p.
    const int64_t pinned_after = f_.pinned_before[p + 1];
    std::vector<uint8_t> sink(makers.size(), 0);
    std::vector<int64_t> cost(makers.size(), 0);  // of a computation after p, at least
    std::vector<size_t> stacked;
    for (size_t k = 0; k < makers.size(); ++k) {
      const OpId c = makers[k];
      cost[k] = f_.LateCost(c, p);
      if (cost[k] > budget_) {
        sink[k] = 1;
      } else if (stacked_ && Unpinned(c) + pinned_after + held > budget_) {
        sink[k] = 1;
        stacked.push_back(k);
      }
    }
    // The network of storages (in 2 + 2i, out 3 + 2i) and makers (first_op
    // + k) with `capacity` per storage and the sinks of `sink`.
    const size_t kSource = 0, kSink = 1, first_op = 2 + 2 * nodes.size();
    auto network = [&](auto capacity, std::vector<FlowNetwork::Edge>* through) {
      FlowNetwork net(first_op + makers.size());
      for (size_t i = 0; i < nodes.size(); ++i) {
        const StorageId x = nodes[i];
        const FlowNetwork::Edge e = net.Add(2 + 2 * i, 3 + 2 * i, capacity(x));
        if (through) through->push_back(e);
        net.Add(3 + 2 * i, first_op + op_pos_[f_.maker[x]], kInfinity);
      }
      for (StorageId g : f_.held_at_end)
        if (f_.maker[g] < p) net.Add(kSource, 2 + 2 * end_pos_[g], kInfinity);
      for (size_t k = 0; k < makers.size(); ++k) {
        if (sink[k]) {
          net.Add(first_op + k, kSink, kInfinity);
          continue;
        }
        if (eager_)
          for (StorageId y : f_.arg_storages[makers[k]])
            if (f_.death[y] >= 0 && f_.death[y] < step)
              net.Add(first_op + k, 2 + 2 * end_pos_[y], kInfinity);
      }
      return net;
    };
    for (bool changed = true; changed && !stacked.empty();) {
      changed = false;
      for (size_t j = 0; j < stacked.size(); ++j) {
        const size_t k = stacked[j];
        const OpId c = makers[k];
        int64_t cut = 0;
        if (end_work_ <= kMaxWork) {
          const std::vector<StorageId>& args = f_.arg_storages[c];
          FlowNetwork net = network(
              [&](StorageId x) {
                const bool counted = f_.constant[x] || f_.pinned_in_program[x] ||
                                     f_.maker[x] == c ||
                                     std::find(args.begin(), args.end(), x) != args.end();
                return counted ? int64_t{0} : size(x);
              },
              nullptr);
          cut = net.MaxFlow(kSource, kSink);
          end_work_ += static_cast<int64_t>(2 * nodes.size() + makers.size());
        }
        cost[k] = std::max(f_.LateCost(c, p), Unpinned(c) + pinned_after + cut);
        if (cost[k] > budget_) continue;
        sink[k] = 0;
        stacked[j--] = stacked.back();
        stacked.pop_back();
        changed = true;
      }
    }
    OpId example = -1;
    int64_t example_cost = 0;
    for (size_t k = 0; k < makers.size(); ++k)
      if (sink[k] && cost[k] > example_cost) {
        example = makers[k];
        example_cost = cost[k];
      }
    const bool example_beside_held = example >= 0 && example_cost > f_.LateCost(example, p);
    if (example < 0) {
      reset();
      return false;
    }
    // p's arguments and F are material at p at no cost beyond (k).
    for (StorageId s : f_.arg_storages[p]) mark_[s] = 1;
    int64_t beside = 0;
    for (StorageId s : kept)
      if (!mark_[s]) {
        beside += size(s);
        mark_[s] = 2;
      }
    for (StorageId s : kept) mark_[s] = 1;
    std::vector<FlowNetwork::Edge> through;
    FlowNetwork net = network(
        [&](StorageId x) {
          if (mark_[x]) return int64_t{0};
          if (Gone(x, p)) return kInfinity;  // cannot be material at p (r), (r')
          return size(x);
        },
        &through);
    for (StorageId s : f_.arg_storages[p]) mark_[s] = 0;
    for (StorageId s : kept) mark_[s] = 0;
    const int64_t cut = net.MaxFlow(kSource, kSink);
    std::vector<uint8_t> side = net.SourceSide(kSource);
    std::vector<StorageId> on_cut;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (side[2 + 2 * i] && !side[3 + 2 * i] && net.capacity(through[i]) > 0)
        on_cut.push_back(nodes[i]);
    if (need + beside + cut > budget_) {
      if (why) {
        *why = CutArgument{};
        why->kind = CutArgument::Kind::kCut;
        why->op = final_pins_;
        why->previous = p;
        why->budget = budget_;
        why->need = need;
        why->carried = beside;
        why->cut = cut;
        why->expensive = example;
        why->expensive_cost = example_cost;
        why->expensive_beside_held = example_beside_held;
        why->kept = kept;
        why->kept_since = since;
        why->cut_storages = on_cut;
        std::sort(why->cut_storages.begin(), why->cut_storages.end());
      }
      reset();
      return true;
    }
    // (f) at p: a storage every affordable cut contains is material at p.
    for (StorageId x : on_cut) {
      const size_t i = static_cast<size_t>(end_pos_[x]);
      const int64_t saved = net.capacity(through[i]);
      net.SetCapacity(through[i], kInfinity);
      const int64_t without = net.MaxFlow(kSource, kSink);
      net.SetCapacity(through[i], saved);
      if (need + beside + without > budget_ &&
          std::find(kept.begin(), kept.end(), x) == kept.end()) {
        kept.push_back(x);
        since.push_back(final_pins_);
      }
    }
    reset();
    return false;
  }

  // (r), (r'): whether x, in the eager runtimes, died before program op c
  // and cannot be material at c's computation point.
  bool Gone(StorageId x, OpId c) const {
    return eager_ && f_.death[x] >= 0 && f_.death[x] < f_.compute_step[c] &&
           (f_.revival[x] > budget_ || (remade_ && !f_.Remade(x, c)));
  }

  // c's argument and output bytes, less the arguments pinned in the program
  // (counted with the pinned bytes).
  int64_t Unpinned(OpId c) const {
    int64_t bytes = f_.own[c];
    for (StorageId y : f_.arg_storages[c])
      if (f_.pinned_in_program[y]) bytes -= size(y);
    return bytes;
  }

  // (k) at p's computation point.
  bool Keep(OpId p, const std::vector<StorageId>& kept, const std::vector<OpId>& since,
            CutArgument* why) {
    if (kept.empty()) return false;
    for (StorageId s : f_.arg_storages[p]) mark_[s] = 1;
    int64_t beside = 0;
    std::vector<StorageId> counted;
    std::vector<OpId> counted_since;
    for (size_t i = 0; i < kept.size(); ++i)
      if (!mark_[kept[i]]) {
        beside += size(kept[i]);
        counted.push_back(kept[i]);
        counted_since.push_back(since[i]);
      }
    for (StorageId s : f_.arg_storages[p]) mark_[s] = 0;
    const int64_t need = static_.per_op[p].total();
    if (need + beside <= budget_) return false;
    if (why) {
      *why = CutArgument{};
      why->kind = CutArgument::Kind::kKeep;
      why->op = p;
      why->budget = budget_;
      why->need = need;
      why->carried = beside;
      why->kept = std::move(counted);
      why->kept_since = std::move(counted_since);
    }
    return true;
  }

  // The frame of p, with `kept` material at p's computation point: refutes,
  // or fills the kept storages of q = p - 1.
  bool Frame(OpId p, const std::vector<StorageId>& kept, const std::vector<OpId>& since,
             std::vector<StorageId>& next, std::vector<OpId>& next_since, CutArgument* why) {
    const OpId q = p - 1, c = f_.charge_point[p];
    const Operator& op = trace_.ops[p];
    const Operator& qop = trace_.ops[q];
    const int32_t to = f_.compute_step[p];
    // Evicted by a last release between q (or the charge point c) and p.
    auto gone_after = [&](OpId o, StorageId s) {
      return eager_ && f_.death[s] > (o >= 0 ? f_.compute_step[o] : -1) && f_.death[s] < to;
    };
    // Certainly defined when p's frame starts: q's arguments and outputs.
    std::vector<TensorId> certain(qop.args.begin(), qop.args.end());
    for (int32_t i = 0; i < qop.num_outputs; ++i) certain.push_back(qop.first_output + i);
    std::erase_if(certain, [&](TensorId t) { return gone_after(q, storage(t)); });
    // SL (none for P: a pin locks nothing for the rest of the phase).
    std::vector<StorageId> locked;
    for (TensorId a : op.args)
      if (p != final_pins_ && std::find(certain.begin(), certain.end(), a) != certain.end() &&
          !f_.constant[storage(a)]) {
        locked_tensor_[a] = 1;
        if (std::find(locked.begin(), locked.end(), storage(a)) == locked.end())
          locked.push_back(storage(a));
      }
    // Reachability from p (paths avoid constants and SL tensors).
    std::vector<OpId> ops;  // reached, p excluded, decreasing id
    std::vector<TensorId> tensors;
    reached_[p] = 1;
    for (OpId o = p; o >= 0; --o) {
      if (!reached_[o]) continue;
      if (o != p) ops.push_back(o);
      for (TensorId t : trace_.ops[o].args) {
        if (f_.constant[storage(t)] || locked_tensor_[t]) continue;
        if (!in_graph_[t]) {
          in_graph_[t] = 1;
          tensors.push_back(t);
        }
        reached_[trace_.tensors[t].op] = 1;
      }
    }
    // K' (K): kept storages that p's frame cannot recompute: their maker is
    // not reachable from p, or costs more than the budget there (c). Costs
    // only grow as K' grows, so K' is found by iteration. The ops between c
    // and p compute nothing but themselves, so a storage of K' made before
    // them that dies after c is gone for good.
    std::vector<StorageId> stay, pending;
    std::vector<OpId> stay_since, pending_since;
    for (size_t i = 0; i < kept.size(); ++i) {
      bool reachable = reached_[f_.maker[kept[i]]];
      (reachable ? pending : stay).push_back(kept[i]);
      (reachable ? pending_since : stay_since).push_back(since[i]);
    }
    std::vector<int64_t> cost;
    int64_t max_cost = Costs(p, locked, stay, ops, cost);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t i = 0; i < pending.size(); ++i) {
        if (pending[i] < 0 || cost[op_rank(ops, f_.maker[pending[i]])] <= budget_) continue;
        stay.push_back(pending[i]);
        stay_since.push_back(pending_since[i]);
        pending[i] = -1;
        grew = true;
      }
      if (grew) max_cost = Costs(p, locked, stay, ops, cost);
    }
    bool refuted = false;
    for (size_t i = 0; i < stay.size() && !refuted; ++i) {
      StorageId x = stay[i];
      if (!gone_after(std::max(c, f_.maker[x]), x)) continue;
      refuted = true;
      if (why) {
        *why = CutArgument{};
        why->kind = CutArgument::Kind::kEvicted;
        why->op = p;
        why->previous = c;
        why->budget = budget_;
        why->kept = {x};
        why->kept_since = {stay_since[i]};
      }
    }
    if (!refuted) {
      // q's outputs are allocated at q's computation, not material there, so
      // they are not carried to q.
      for (size_t i = 0; i < stay.size(); ++i)
        if (f_.maker[stay[i]] != q) {
          next.push_back(stay[i]);
          next_since.push_back(stay_since[i]);
        }
      // Charged at c, and at q too when it is not c: q's static need is
      // smaller, but the outputs of the ops between c and q are not free there.
      std::vector<OpId> charges;
      if (c >= 0) charges.push_back(c);
      if (q != c && f_.compute_step[q] >= 0) charges.push_back(q);
      for (OpId at : charges)
        if (max_cost > budget_ && !refuted)
          refuted = Cut(p, at, stay, stay_since, ops, tensors, cost, next, next_since, why);
    }
    // Reset the per-frame marks.
    reached_[p] = 0;
    for (OpId o : ops) {
      reached_[o] = 0;
      dist_[o] = kInfinity;
    }
    dist_[p] = kInfinity;
    for (TensorId t : tensors) in_graph_[t] = 0;
    for (TensorId a : op.args) locked_tensor_[a] = 0;
    return refuted;
  }

  // Whether some operator that can pre-lock y, reachable in this frame, can
  // be above c on a chain.
  bool ChargedAbove(StorageId y, OpId c) const {
    return f_.ChargedAbove(y, c, [this](OpId o) { return reached_[o] != 0; });
  }

  // The position of op o in `ops` (decreasing ids).
  static size_t op_rank(const std::vector<OpId>& ops, OpId o) {
    return std::lower_bound(ops.begin(), ops.end(), o, std::greater<>()) - ops.begin();
  }

  // (c): cost[i] for each op of `ops` computed in p's frame, with SL
  // (`locked`) and K' (`stay`) material throughout; returns the largest.
  int64_t Costs(OpId p, const std::vector<StorageId>& locked, const std::vector<StorageId>& stay,
                const std::vector<OpId>& ops, std::vector<int64_t>& cost) {
    // Storages counted outside the paths: SL and K', pinned (constants, never charged).
    for (StorageId s : locked) mark_[s] = 1;
    for (StorageId s : stay) mark_[s] = 1;
    int64_t held = 0;  // |SL u K'|
    {
      std::vector<StorageId> both(locked);
      both.insert(both.end(), stay.begin(), stay.end());
      std::sort(both.begin(), both.end());
      both.erase(std::unique(both.begin(), both.end()), both.end());
      for (StorageId s : both) held += size(s);
    }
    // Shortest charged paths, in decreasing id (a topological order).
    for (OpId o : ops) dist_[o] = kInfinity;
    dist_[p] = 0;
    auto relax_from = [&](OpId c) {
      const Operator& co = trace_.ops[c];
      // P: the unmarked storages of the arguments before i (no op is above P).
      int64_t pinned_before = 0;
      std::vector<StorageId> summed;
      for (size_t i = 0; i < co.args.size(); ++i) {
        TensorId t = co.args[i];
        const StorageId s = storage(t);
        if (f_.edge[c][i] && !locked_tensor_[t]) {
          int64_t w = pinned_before;
          if (c != final_pins_) {
            w = 0;
            for (StorageId y : f_.prelocks[c][i])
              if (!mark_[y] && !ChargedAbove(y, c)) w += size(y);
          }
          OpId a = trace_.tensors[t].op;
          dist_[a] = std::min(dist_[a], dist_[c] + w);
        }
        if (c == final_pins_ && !mark_[s] && !f_.constant[s]) {
          mark_[s] = 2;  // summed once
          summed.push_back(s);
          pinned_before += size(s);
        }
      }
      for (StorageId s : summed) mark_[s] = 0;
    };
    relax_from(p);
    for (OpId c : ops) relax_from(c);
    const int64_t pinned = f_.pinned_before[p];
    cost.assign(ops.size(), 0);
    int64_t max_cost = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      OpId c = ops[i];
      int64_t extra = 0, overlap = 0;
      for (StorageId y : f_.arg_storages[c]) {
        if (mark_[y]) continue;
        extra += size(y);
        if (ChargedAbove(y, c)) overlap += size(y);
      }
      cost[i] = pinned + held + extra + trace_.ops[c].total_size +
                std::max<int64_t>(0, dist_[c] - overlap);
      max_cost = std::max(max_cost, cost[i]);
    }
    for (StorageId s : locked) mark_[s] = 0;
    for (StorageId s : stay) mark_[s] = 0;
    return max_cost;
  }

  // (a), (d), (f) for the frame of p charged at the computation of c (q, or
  // the last op before p whose frame computes more than itself).
  bool Cut(OpId p, OpId c, const std::vector<StorageId>& stay, const std::vector<OpId>& stay_since,
           const std::vector<OpId>& ops, const std::vector<TensorId>& tensors,
           const std::vector<int64_t>& cost, std::vector<StorageId>& next,
           std::vector<OpId>& next_since, CutArgument* why) {
    const int32_t from = f_.compute_step[c], to = f_.compute_step[p];
    auto gone = [&](StorageId s) { return eager_ && f_.death[s] > from && f_.death[s] < to; };
    // Material at p's start at no cost beyond c's static need: c's arguments
    // and outputs, and the outputs of the ops between c and p.
    std::vector<StorageId> free_storages;
    for (TensorId a : trace_.ops[c].args) free_storages.push_back(storage(a));
    for (OpId o = c; o < p; ++o)
      for (int32_t i = 0; i < trace_.ops[o].num_outputs; ++i)
        free_storages.push_back(storage(trace_.ops[o].first_output + i));
    std::erase_if(free_storages, [&](StorageId s) { return gone(s) || f_.constant[s]; });
    // K' beyond the free storages is counted at c (a).
    for (StorageId s : free_storages) mark_[s] = 1;
    int64_t carried = 0;
    for (StorageId s : stay)
      if (!mark_[s]) carried += size(s);
    for (StorageId s : free_storages) mark_[s] = 0;
    const int64_t need = static_.per_op[c].total();

    // (d): the cut network. A path that reaches an expensive operator ends
    // there (its edge to the sink is infinite), so the network holds the
    // tensors whose operators lead to an expensive one through cheap ones.
    for (size_t k = 0; k < ops.size(); ++k) op_pos_[ops[k]] = static_cast<int32_t>(k);
    std::vector<uint8_t> leads(ops.size(), 0);
    for (size_t k = ops.size(); k-- > 0;) {  // increasing id: arguments first
      if (cost[k] > budget_) {
        leads[k] = 1;
        continue;
      }
      for (TensorId t : trace_.ops[ops[k]].args)
        if (in_graph_[t] && leads[op_pos_[trace_.tensors[t].op]]) {
          leads[k] = 1;
          break;
        }
    }
    std::vector<TensorId> nodes;
    for (TensorId t : tensors)
      if (leads[op_pos_[trace_.tensors[t].op]]) {
        tensor_pos_[t] = static_cast<int32_t>(nodes.size());
        nodes.push_back(t);
        ++per_storage_[storage(t)];
      }
    auto reset = [&] {
      for (OpId c : ops) op_pos_[c] = -1;
      for (TensorId t : nodes) {
        tensor_pos_[t] = -1;
        per_storage_[storage(t)] = 0;
      }
    };
    bool any = false;
    for (TensorId a : trace_.ops[p].args) any |= tensor_pos_[a] >= 0;
    if (!any) {
      reset();
      return false;
    }
    for (StorageId s : free_storages) mark_[s] = 1;
    for (StorageId s : stay) mark_[s] = 1;
    const size_t kSource = 0, kSink = 1, first_op = 2 + 2 * nodes.size();
    FlowNetwork net(first_op + ops.size());
    std::vector<FlowNetwork::Edge> through(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      StorageId s = storage(nodes[i]);
      int64_t capacity;
      if (gone(s))
        capacity = kInfinity;  // evicted between c and p
      else if (mark_[s])
        capacity = 0;  // material anyway, or already counted
      else if (Gone(s, c))
        capacity = kInfinity;  // dead before c and not revivable (r), (r')
      else
        capacity = size(s) / per_storage_[s];
      through[i] = net.Add(2 + 2 * i, 3 + 2 * i, capacity);
      net.Add(3 + 2 * i, first_op + op_pos_[trace_.tensors[nodes[i]].op], kInfinity);
    }
    for (TensorId a : trace_.ops[p].args)
      if (tensor_pos_[a] >= 0) net.Add(kSource, 2 + 2 * tensor_pos_[a], kInfinity);
    for (StorageId s : free_storages) mark_[s] = 0;
    for (StorageId s : stay) mark_[s] = 0;
    OpId example = -1;
    int64_t example_cost = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
      if (!leads[k]) continue;
      if (cost[k] > budget_) {
        net.Add(first_op + k, kSink, kInfinity);
        if (cost[k] > example_cost) {
          example = ops[k];
          example_cost = cost[k];
        }
        continue;
      }
      for (TensorId t : trace_.ops[ops[k]].args)
        if (tensor_pos_[t] >= 0) net.Add(first_op + k, 2 + 2 * tensor_pos_[t], kInfinity);
    }
    reset();
    const int64_t cut = net.MaxFlow(kSource, kSink);
    if (need + carried + cut > budget_) {
      if (why) {
        *why = CutArgument{};
        why->kind = CutArgument::Kind::kCut;
        why->op = p;
        why->previous = c;
        why->budget = budget_;
        why->need = need;
        why->carried = carried;
        why->cut = cut;
        why->expensive = example;
        why->expensive_cost = example_cost;
        why->kept = stay;
        why->kept_since = stay_since;
        std::vector<uint8_t> side = net.SourceSide(kSource);
        for (size_t i = 0; i < nodes.size(); ++i)
          if (side[2 + 2 * i] && !side[3 + 2 * i])
            why->cut_storages.push_back(storage(nodes[i]));
        std::sort(why->cut_storages.begin(), why->cut_storages.end());
        why->cut_storages.erase(
            std::unique(why->cut_storages.begin(), why->cut_storages.end()),
            why->cut_storages.end());
      }
      return true;
    }
    // (f): storages in every affordable cut.
    std::vector<uint8_t> side = net.SourceSide(kSource);
    std::vector<StorageId> candidates;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (side[2 + 2 * i] && !side[3 + 2 * i] && net.capacity(through[i]) > 0)
        candidates.push_back(storage(nodes[i]));
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (StorageId s : candidates) {
      std::vector<std::pair<size_t, int64_t>> saved;
      for (size_t i = 0; i < nodes.size(); ++i)
        if (storage(nodes[i]) == s) {
          saved.emplace_back(i, net.capacity(through[i]));
          net.SetCapacity(through[i], kInfinity);
        }
      const int64_t without = net.MaxFlow(kSource, kSink);
      for (auto [i, c] : saved) net.SetCapacity(through[i], c);
      if (need + carried + without > budget_ &&
          std::find(next.begin(), next.end(), s) == next.end()) {
        next.push_back(s);
        next_since.push_back(p);
      }
    }
    return false;
  }

  const Trace& trace_;
  const TraceFacts& f_;
  const MemoryBound& static_;
  const OpId final_pins_;  // P of (P), -1 if none
  const bool eager_;
  const bool held_to_end_;  // CutOptions::held_to_end
  const bool stacked_;      // CutOptions::stacked
  const bool remade_;       // CutOptions::remade
  const size_t nst_;
  int64_t budget_ = 0;
  OpId refuted_at_ = -1;  // Refutes: the last operator walked
  std::vector<uint8_t> reached_;
  std::vector<int64_t> dist_;
  std::vector<uint8_t> in_graph_, locked_tensor_, mark_;
  // The cut network's indices (-1 / 0 outside a frame's network).
  std::vector<int32_t> op_pos_, tensor_pos_, per_storage_;
  std::vector<int32_t> end_pos_;  // EndCut's network indices (-1 outside it)
  OpId end_from_ = 0;             // EndCut: nothing to cut before this op, at budget_
  int64_t end_work_ = 0;          // EndCut: work done at budget_
};

}  // namespace

CutOptions CutOptionsFor(RuntimeKind runtime) {
  if (runtime == RuntimeKind::kV1)
    throw Error("the cut argument models the RuntimeV2 family, not RuntimeV1");
  CutOptions o;
  o.eager = runtime == RuntimeKind::kV2Eager || runtime == RuntimeKind::kV2EagerOptimized;
  return o;
}

namespace {

// The trace with P (AddFinalPins) and what the walk reads of it.
struct WalkInput {
  WalkInput(const Trace& original, bool eager)
      : trace(original),
        final_pins(AddFinalPins(trace)),
        static_bound(ComputeMemoryBound(trace)),
        facts(Gather(trace, final_pins, eager)) {
    GatherLateNeeds(trace, facts, eager);
  }
  Trace trace;
  OpId final_pins;
  MemoryBound static_bound;
  TraceFacts facts;
};

// (C), with (C+) unless the options turn it off: the spans beside a frame
// come from a second Spans on the same input.
class Checkpoints {
 public:
  Checkpoints(const WalkInput& in, const CutOptions& options)
      : inner_(in.trace, in.facts, in.static_bound, options.checkpoint_candidates),
        spans_(in.trace, in.facts, in.static_bound, options.checkpoint_candidates) {
    if (options.checkpoints_beside) spans_.SetInner(&inner_);
  }
  Checkpoints(const Checkpoints&) = delete;
  Checkpoints& operator=(const Checkpoints&) = delete;

  bool Refutes(int64_t budget, CutArgument* why) { return spans_.Refutes(budget, why); }

 private:
  Spans inner_, spans_;
};

}  // namespace

// The walk reads the static needs of the trace with P, computed in WalkInput.
bool RefuteByCut(const Trace& trace, const MemoryBound& /*static_bound*/, int64_t budget,
                 const CutOptions& options, CutArgument* argument) {
  WalkInput in(trace, options.eager);
  if (Walk(in.trace, in.facts, in.static_bound, in.final_pins, options).Refutes(budget, argument))
    return true;
  return options.checkpoints && Checkpoints(in, options).Refutes(budget, argument);
}

CutBound ComputeCutBound(const Trace& trace, const MemoryBound& static_bound, int64_t feasible,
                         const CutOptions& options) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  WalkInput in(trace, options.eager);
  Walk walk(in.trace, in.facts, in.static_bound, in.final_pins, options);
  const OpId n = static_cast<OpId>(in.trace.ops.size());
  CutBound b;
  b.bytes = static_bound.bytes;
  // Invariant: every budget <= lo is refuted (lo = static - 1 by the static
  // bound); hi is not refuted.
  int64_t lo = static_bound.bytes - 1, hi = std::max(feasible, static_bound.bytes);
  ++b.tests;
  ++b.whole_walks;
  if (walk.Refutes(hi, nullptr))
    throw Error(fmt::format(
        "internal error: the cut argument refutes budget {}, at which a schedule is known to fit",
        hi));
  const int64_t resolution = std::max<int64_t>(1, options.resolution);
  // A budget the whole walk does not refute takes the whole walk, one that it
  // refutes usually stops near the end (at the final pins and the last
  // frames). So bisect with walks of the last `depth` operators (a
  // refutation there is one of the whole walk's), then walk the whole program
  // at the lowest budget left standing: if it holds there, the bisection is
  // the whole walk's; if not, walk deeper than where it refuted and go on
  // above it.
  OpId depth = options.first_depth > 0 ? options.first_depth : std::max<OpId>(64, n / 32);
  CutArgument arg;
  // The static bound itself first: most traces end there.
  int64_t next = lo + 1;
  while (true) {
    while (next < hi) {
      if (options.seconds > 0 && elapsed() > options.seconds) {
        b.timed_out = true;
        break;
      }
      ++b.tests;
      b.whole_walks += depth >= n;
      if (walk.Refutes(next, &arg, depth)) {
        lo = next;
        b.raised = true;
        b.attained_by = arg;
      } else {
        hi = next;
      }
      if (hi - lo <= resolution) break;
      next = lo + (hi - lo) / 2;
    }
    if (b.timed_out || depth >= n || hi - lo > resolution) break;
    ++b.tests;
    ++b.whole_walks;
    if (!walk.Refutes(hi, &arg)) break;
    // Refuted deeper than `depth`: hi joins the refuted side; the budget not
    // refuted by the whole walk bounds the rest.
    lo = hi;
    b.raised = true;
    b.attained_by = arg;
    hi = std::max(feasible, static_bound.bytes);
    depth = std::max<OpId>(2 * depth, 2 * (n - walk.refuted_at()));
    next = lo + (hi - lo) / 2;
    if (hi - lo <= resolution) break;
  }
  // (C) above the walk's threshold: the walk refutes nothing there (it is
  // monotone), so bisect the checkpoints' test alone. It need not be monotone:
  // any budget it refutes is proven infeasible, and so is every budget below.
  if (options.checkpoints && !b.timed_out && hi - lo <= resolution) {
    Checkpoints spans(in, options);
    hi = std::max(feasible, static_bound.bytes);
    next = lo + 1;
    while (next < hi) {
      if (options.seconds > 0 && elapsed() > options.seconds) {
        b.timed_out = true;
        break;
      }
      ++b.tests;
      ++b.checkpoint_tests;
      if (spans.Refutes(next, &arg)) {
        lo = next;
        b.raised = true;
        b.attained_by = arg;
      } else {
        // The first budget above the walk's threshold stands: nothing more.
        if (next == lo + 1) break;
        hi = next;
      }
      if (hi - lo <= resolution) break;
      next = lo + (hi - lo) / 2;
    }
  }
  b.bytes = lo + 1;
  return b;
}

}  // namespace dtr
