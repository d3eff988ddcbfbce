// The keep-or-recompute cut: a lower bound on the memory of any schedule that
// sees what the static bound (checker/memory_bound.h) cannot: a tensor needed
// by an operator is either kept material across the computation before it, or
// rematerialized inside the operator's frame, and rematerializing it may force
// a recursion whose pending frames hold locks.
//
// The argument, for one program operator p and a budget B (the proof that it
// holds for every eviction script is in cut_bound.cc):
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
//    defined when the frame started (locked for the whole frame), and the
//    locks of the pending frames between p and c: each pending frame holds
//    the arguments that precede, in argument order, the one it is
//    materializing. A lower bound on those locks over every possible chain of
//    frames gives cost(c); c is *expensive* at B if cost(c) > B.
//  - So D must cut every path of arguments from p to an expensive operator.
//    If q's static need plus the cheapest such cut (a minimum vertex cut,
//    computed as a maximum flow) exceeds B, no script fits B.
// The bound is the smallest budget that passes this test at every operator
// (and the static bound). It holds for the RuntimeV2 family; `eager` says
// whether releases evict (RuntimeV2Eager*), which makes some cuts impossible.
#pragma once

#include <cstdint>
#include <vector>

#include "checker/memory_bound.h"
#include "model/trace.h"

namespace dtr {

// Why budgets below `bytes` fail: the frame of `op`.
struct CutArgument {
  OpId op = -1;        // the program operator whose frame is examined
  OpId previous = -1;  // the operator computed just before its frame starts
  int64_t bytes = 0;   // every budget below this fails by this argument
  // At the budget bytes - 1 (the largest one refuted):
  int64_t previous_need = 0;  // the static need of `previous`
  int64_t cut = 0;            // the least memory that must stay material beyond it
  int64_t budget = 0;         // bytes - 1
  OpId expensive = -1;        // an operator the frame would otherwise recompute...
  int64_t expensive_cost = 0;  // ...needing this much memory, above the budget
  std::vector<StorageId> cut_storages;  // one minimum cut (what must stay material)
};

struct CutBound {
  int64_t bytes = 0;  // every budget below this fails for every script (>= the static bound)
  // The argument that attains `bytes`; absent (op -1) if no frame raises the
  // static bound.
  CutArgument attained_by;
  int32_t frames_examined = 0;  // program operators whose recursion had an expensive operator
  double seconds = 0;
};

struct CutOptions {
  bool eager = true;  // the runtime evicts a storage at its last release (RuntimeV2Eager*)
  // Bisection stops when the open interval is at most this many bytes wide
  // (the reported bound is the low end: sound either way).
  int64_t resolution = 1;
};

// The bound, raised from `static_bound` (ComputeMemoryBound(trace)).
CutBound ComputeCutBound(const Trace& trace, const MemoryBound& static_bound,
                         const CutOptions& options);

// Whether the argument refutes `budget`: the first frame that does, if any.
// (budget < ComputeCutBound(...).bytes iff this finds one, up to the
// resolution.)
bool RefuteByCut(const Trace& trace, const MemoryBound& static_bound, int64_t budget,
                 const CutOptions& options, CutArgument* argument);

}  // namespace dtr
