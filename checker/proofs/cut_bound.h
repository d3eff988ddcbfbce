// The keep-or-recompute cut: a lower bound on the memory of any schedule that
// sees what the static bound (checker/proofs/memory_bound.h) cannot: a tensor needed
// by an operator is either kept material across the computation before it, or
// rematerialized inside the operator's frame, and rematerializing it may force
// a recursion whose pending frames hold locks.
//
// The argument at a budget B, for each program operator p, walking the
// program backwards (the proof that it holds for every eviction script is in
// cut_bound.cc):
//  - At the computation point of the operator q computed just before p, memory
//    is at least q's static need (pinned + q's arguments + q's outputs) plus
//    every other storage D that is material there.
//  - The storages material when p's frame starts are D, q's arguments and q's
//    outputs (minus storages released for the last time in between, which the
//    eager runtimes evict). Every argument of p on another storage must be
//    recomputed in p's frame, and so must, recursively, the arguments of each
//    operator recomputed there whose storages are not material at the start.
//  - Any computation of an operator c inside p's frame happens with c's
//    arguments locked, the pinned storages, the arguments of p that were
//    defined when the frame started (locked for the whole frame), the storages
//    known to stay material through the frame (below), and the locks of the
//    pending frames between p and c: each pending frame holds the arguments
//    that precede, in argument order, the one it is materializing. A lower
//    bound over every possible chain of frames gives cost(c); c is
//    *expensive* if cost(c) > B.
//  - So D must cut every path of arguments from p to an expensive operator. A
//    storage that died (last release) before q and whose revival would need an
//    expensive computation cannot be in D. If q's static need plus the
//    cheapest cut (a minimum vertex cut, computed as a maximum flow) exceeds
//    B, no script fits B.
//  - A storage that every affordable cut contains must be material at q's
//    computation point ("kept"). If it cannot be recomputed in q's frame
//    either, it is material throughout q's frame and when the frame starts:
//    it counts at every computation of q's frame and is carried to the
//    operator before q, and so on. A kept storage that q's static need cannot
//    hold beside it also refutes B.
// The walk starts at the final pins: after the last program step every name
// still referenced is rematerialized if needed and pinned, one after another,
// and those frames are treated like the frame of one more operator whose
// arguments are the pinned tensors in pin order (each pin holds the ones
// before it as a frame holds its earlier arguments, but nothing is locked for
// the whole phase). What every affordable cut there contains (on Transformer:
// the weight gradients, which only a replay of the backward pass could bring
// back) must be material at the last operator, and is carried from there.
// The storages the final pins need (on Transformer: the weight gradients)
// are also charged where they already exist: at each operator p, unless a
// computation after p could bring back each one made before p (its maker,
// and the makers of the dead arguments it needs, each within the budget),
// memory at p's computation point holds a cut of them or of those dead
// arguments beside p's static need.
// Checkpoints: an argument over many frames, for chain-like and recurrent
// programs. At the computation point of a program operator p, each later
// operator q needs its arguments material; one made before p that is not
// material then must be recomputed in a frame between p and q, from
// storages material then, and so on down: a path of arguments from it to a
// storage whose maker no frame between p and q can compute within the
// budget passes through a storage material at p's computation point (a
// checkpoint). Disjoint such paths (spans) each hold one, beside p's
// static need (on an RNN, the forward states the backward pass needs,
// spaced by how far back a backward step can recompute). A span at a
// budget is one at every lower budget (what no frame can compute within B
// it cannot within less), so a checkpoints argument refutes every budget
// below its own, though the greedy search for spans need not find it there.
// The bound is the smallest budget the argument does not refute (at least the
// static bound), found by bisection (the cut's test is monotone in B; the
// spans' is bisected after it). It holds for
// the RuntimeV2 family; `eager` says whether releases evict (RuntimeV2Eager*).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "checker/engine/replay.h"
#include "checker/proofs/memory_bound.h"
#include "model/trace.h"

namespace dtr {

// CutArgument::op and kept_since: the frames of the final pins.
inline constexpr OpId kFinalPins = -2;

// Why a budget fails, at the frame of `op`.
struct CutArgument {
  enum class Kind {
    kCut,          // previous_need + carried + cut > budget
    kKeep,         // the static need of `op` plus the kept storages beside its arguments > budget
    kEvicted,      // a storage that must stay material was evicted by its last release before `op`
    kCheckpoints,  // the static need of `op` plus one storage of each disjoint span > budget
  };
  Kind kind = Kind::kCut;
  OpId op = -1;  // the program operator whose frame (or computation point) is examined, or kFinalPins
  OpId previous = -1;  // kCut: the operator computed just before its frame starts
  int64_t budget = 0;  // the budget refuted
  int64_t need = 0;    // kCut: the static need of `previous`; kKeep: of `op`
  int64_t carried = 0;  // kept storages counted beside it
  int64_t cut = 0;      // kCut: the least memory that must also stay material there
  OpId expensive = -1;  // kCut: an operator the frame would otherwise have to recompute...
  int64_t expensive_cost = 0;  // ...needing at least this much memory, above the budget
  // expensive_cost counts, beside that computation's own need, the storages
  // the final pins need that must stay material while it runs ((E') in
  // cut_bound.cc).
  bool expensive_beside_held = false;
  std::vector<StorageId> kept;  // the kept storages (kKeep, kEvicted: the ones that refute)
  // For each kept storage, the operator whose frame showed it must stay material.
  std::vector<OpId> kept_since;
  std::vector<StorageId> cut_storages;  // kCut: one minimum cut; kCheckpoints: each span's smallest
  // kCheckpoints: per span, the later operator whose argument it holds, and
  // its storages from that argument down to the first one no frame in
  // between can recompute.
  std::vector<OpId> span_ops;
  std::vector<std::vector<StorageId>> spans;
};
std::string_view CutKindName(CutArgument::Kind kind);  // "cut", "keep", "evicted", "checkpoints"

struct CutOptions {
  bool eager = true;  // the runtime evicts a storage at its last release (RuntimeV2Eager*)
  // Bisection stops when the open interval is at most this many bytes wide
  // (the reported bound is its low end: sound either way).
  int64_t resolution = 1;
  // Total seconds for the bisection (0: no limit); when it runs out, the
  // bound proven so far is returned (timed_out is set).
  double seconds = 0;
  // (E) in cut_bound.cc: the storages the final pins need, made before an
  // operator, are charged there unless a computation after it could bring
  // them back within the budget. Off only to measure what it adds.
  bool held_to_end = true;
  // (E') in cut_bound.cc: a maker counts as too expensive to compute after
  // that operator also when its computation could not hold, beside its own
  // need, the storages the final pins need that would be lost without it.
  // Off only to measure what it adds.
  bool stacked = true;
  // (r') in cut_bound.cc: a storage that died cannot be material at a
  // program operator's computation unless its maker is an argument-ancestor
  // of an operator computed after the death and not after that one. Off only
  // to measure what it adds.
  bool remade = true;
  // The bisection first walks this many operators from the end of the
  // program (0: max(64, 1/32 of them)), then the whole program where that
  // leaves a budget standing (ComputeCutBound). The bound does not depend on
  // it beyond the resolution; tests set it to exercise both paths.
  int32_t first_depth = 0;
  // The checkpoints argument, at the program operators with the largest
  // static needs (this many; ties by id). Off only to measure what it adds.
  bool checkpoints = true;
  int32_t checkpoint_candidates = 64;
  // (C+) in cut_bound.cc: a frame recomputes a span's storage only if the
  // computation also fits beside the checkpoints the operators after it
  // need then. Off only to measure what it adds.
  bool checkpoints_beside = true;
};

// eager set for RuntimeV2Eager and RuntimeV2EagerOptimized. Throws Error for
// RuntimeV1, whose banishing the argument does not model.
CutOptions CutOptionsFor(RuntimeKind runtime);

struct CutBound {
  int64_t bytes = 0;  // every budget below this fails for every script (>= the static bound)
  // The argument refuting bytes - 1, if bytes is above the static bound.
  bool raised = false;
  CutArgument attained_by;
  int32_t tests = 0;        // budgets tested
  int32_t whole_walks = 0;  // of them, walked over the whole program (the rest stop near its end)
  int32_t checkpoint_tests = 0;  // of them, budgets the checkpoints argument was tried at
  bool timed_out = false;
};

// The bound, between `static_bound` (ComputeMemoryBound(trace)) and `feasible`
// (a budget some script is known to fit, e.g. a verified schedule's peak, or
// the baseline memory). Throws Error (an internal error) if the argument
// refutes `feasible`.
CutBound ComputeCutBound(const Trace& trace, const MemoryBound& static_bound, int64_t feasible,
                         const CutOptions& options);

// Whether the argument refutes `budget`; if so and `argument` is not null, why.
bool RefuteByCut(const Trace& trace, const MemoryBound& static_bound, int64_t budget,
                 const CutOptions& options, CutArgument* argument);

}  // namespace dtr
