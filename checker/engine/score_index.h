// An index of the eviction pool's scores that finds simrd's choice without
// scoring the whole pool: a kinetic tournament over pool slots.
//
// simrd scans the pool in slot order, keeps the candidate whose score is <=
// the best so far (the last of equal scores wins) and stops at a score of 0
// (heuristic/*.py). So its choice is the first slot scoring 0 if there is
// one, else the last slot of the lowest score; and the evaluations it counts
// are that zero's rank among the live slots, else the pool's size. Both
// follow from a total order on (score, slot): a lower score wins; of equal
// scores the earlier slot wins at 0 and the later one elsewhere. The index
// keeps, for every node of a complete binary tree over the slots, the winner
// of that order among its leaves.
//
// Scores change with the clock: a slot's score is cost / (divisor *
// staleness), staleness = clock - last access (or no staleness factor, or
// +inf for a storage never accessed), each a Python float (ExactDivide).
// Two scores C_a / (D_a (T - L_a)) and C_b / (D_b (T - L_b)) compare as the
// integers x = C_a D_b (T - L_b) and y = C_b D_a (T - L_a), linear in the
// clock T; their floats differ and keep the integers' order unless
// |x - y| <= 2^-50 (x + y) (a rounding tie needs a relative difference
// below 2^-51). So each node also keeps an expiry: a clock before which its
// winner cannot change, proven with exact 128-bit arithmetic (see
// Certificate() in the .cc). The clock only grows; a query at clock T first
// recomputes the nodes that expired by T and those above changed leaves.
//
// The index does not know the engine: its owner sets each live slot's key
// (Place/Remove) whenever one of its inputs changes, and rebuilds it when the
// pool is renumbered (see HeuristicPolicy and Engine::DrainScoreChanges).
// A key's cost may be a lower bound (`partial`, a forward region not walked
// yet): the winner is then exact only if it is not partial; its owner
// completes it and asks again.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "checker/engine/exact_divide.h"
#include "checker/engine/run_result.h"
#include "model/trace.h"

namespace dtr {

// simrd's score cost / (divisor * staleness) as a Python float: +inf for a
// zero denominator, 0 for a staleness of +inf (staleness < 0 here) unless
// the divisor is 0. Without `by_staleness` the staleness is left out. (The
// cost is negative only for equivalence classes, whose values simrd lowers
// on rematerialization; the index never holds those.)
inline double QuotientScore(int64_t cost, uint64_t divisor, bool by_staleness, int64_t staleness) {
  uint128 den = divisor;
  if (by_staleness) {
    if (staleness < 0) return den == 0 ? std::numeric_limits<double>::infinity() : 0.0;
    den *= static_cast<uint128>(staleness);
  }
  if (den == 0) return std::numeric_limits<double>::infinity();
  if (cost < 0) return -ExactDivide(-static_cast<uint64_t>(cost), den);
  return ExactDivide(static_cast<uint64_t>(cost), den);
}

struct ScoreKey {
  int64_t cost = 0;      // >= 0; a lower bound of the real cost while `partial`
  uint64_t divisor = 1;  // the storage size, or 1 for scores that leave size out
  int64_t last = 0;      // last access, or kNeverAccessed; unused without staleness
  bool partial = false;
};

class ScoreIndex {
 public:
  // Empties the index for slots [0, capacity) (rounded up to a power of
  // two), held by storages [0, storages), of scores with or without the
  // staleness factor; `formula` is the owner's tag for what the keys mean.
  // `pool_epoch` is the owner's tag for the slot numbering.
  void Reset(int32_t capacity, int32_t storages, bool by_staleness, int32_t formula,
             int64_t pool_epoch);
  int32_t capacity() const { return capacity_; }
  int32_t formula() const { return formula_; }
  int64_t pool_epoch() const { return pool_epoch_; }

  // Storage s now holds `slot` with `key` (new, moved or changed), or no
  // slot (Remove).
  void Place(StorageId s, int32_t slot, const ScoreKey& key);
  void Remove(StorageId s);
  int32_t slot_of(StorageId s) const { return slot_of_[s]; }
  StorageId storage_at(int32_t slot) const { return storage_at_[slot]; }
  const ScoreKey& key(int32_t slot) const { return keys_[slot]; }

  // The winning slot at `clock` (-1 when no slot is live).
  // REQUIRES: clock >= the clock of every earlier call.
  int32_t Winner(int64_t clock);
  // The live slots up to and including `slot`. REQUIRES: Winner() since
  // the last Set/Clear, slot live.
  int32_t Rank(int32_t slot) const;
  // The live slots. REQUIRES: Winner() since the last Place/Remove.
  int32_t live() const { return capacity_ == 0 ? 0 : count_[1]; }
  double ScoreAt(int32_t slot, int64_t clock) const;

  // Node recomputations so far (for benchmarks and tests).
  int64_t recomputations() const { return recomputations_; }

 private:
  static constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kDirty = std::numeric_limits<int64_t>::min();

  void Clear(int32_t slot);
  void MarkDirty(int32_t node);
  void Visit(int32_t node, int64_t clock);
  double CachedScore(int32_t slot, int64_t clock);
  // The first clock after `clock` at which the order of slots a < b may
  // differ from the order at `clock`, or kForever.
  int64_t Certificate(const ScoreKey& a, const ScoreKey& b, int64_t clock) const;

  int32_t capacity_ = 0;
  bool by_staleness_ = false;
  int32_t formula_ = -1;
  int64_t pool_epoch_ = -1;
  // Per node (1 is the root; leaves at capacity_ + slot): the winning slot
  // or -1, the clock the node's own comparison expires at, the least expiry
  // in its subtree (kDirty: recompute), and its live leaves.
  std::vector<int32_t> win_;
  std::vector<int64_t> expiry_, sub_expiry_;
  std::vector<int32_t> count_;
  // Per slot: the storage holding it (-1: none), the key, and its score at
  // the clock it was last computed for. Per storage: its slot or -1.
  std::vector<StorageId> storage_at_;
  std::vector<int32_t> slot_of_;
  std::vector<ScoreKey> keys_;
  std::vector<double> score_;
  std::vector<int64_t> score_clock_;
  int64_t recomputations_ = 0;
};

}  // namespace dtr
