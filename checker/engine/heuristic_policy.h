// simrd's eviction heuristics (heuristic/*.py) as a policy: score every
// storage of the pool in pool order, keep the candidate whose score is <=
// the best so far (the last of equal scores wins), stop at a score of 0.
// Scores are Python floats from integer quotients, reproduced exactly
// (checker/engine/exact_divide.h).
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "checker/engine/eviction_policy.h"
#include "checker/engine/heuristic.h"

namespace dtr {

class HeuristicPolicy : public EvictionPolicy {
 public:
  // seed: RandomStorage / AbRandom only. `heuristic` must outlive the policy.
  HeuristicPolicy(const HeuristicSpec& heuristic, uint64_t seed);
  StorageId Choose(Engine& engine, DecisionPoint* detail) override;
  // Score and terms of s; none for a random heuristic.
  std::optional<std::pair<double, ScoreTerms>> Explain(Engine& engine, StorageId s) override;

  // The score of s now, and what it is made of.
  double Score(Engine& engine, StorageId s);
  // Without `forward`, the regions heuristics leave out the forward region's
  // compute (a lower bound of the cost).
  ScoreTerms Terms(Engine& engine, StorageId s, bool forward = true);
  double ScoreOf(const ScoreTerms& t) const;

  // Throws Error if the engine lacks what the heuristic reads (regions,
  // equivalence classes: optimized runtimes only).
  static void CheckSupported(const HeuristicSpec& heuristic, RuntimeKind runtime);

  // Process-wide, for tests and benchmarks: choices without `detail` use
  // the engine's score index (checker/engine/score_index.h) from this pool size
  // on (0: always; kNever: never), where the heuristic allows one. With
  // `verify`, every indexed choice is also made by scanning the pool, and
  // every key compared with a fresh one; a difference throws
  // std::logic_error.
  static constexpr int32_t kNever = std::numeric_limits<int32_t>::max();
  static void set_index_from_pool(int32_t pool_size, bool verify = false);
  static int64_t indexed_choices();  // since the process started

 private:
  // Whether the score has a form the index orders (not equivalence
  // classes, which change without a log entry, nor LRU or random).
  bool Indexable() const;
  StorageId ChooseIndexed(Engine& engine);
  StorageId ChooseByScan(Engine& engine, DecisionPoint* detail, int64_t* evaluations);
  ScoreKey KeyOf(Engine& engine, StorageId s);
  // Brings the engine's index up to date with its pool.
  void SyncIndex(Engine& engine);
  void VerifyIndexed(Engine& engine, StorageId chosen, int64_t evaluations);

  const HeuristicSpec& h_;
  std::mt19937_64 rng_;
  // DTRUnopt's scratch: regions rebuilt from scratch, and marks for their union.
  std::vector<StorageId> unopt_fwd_, unopt_rev_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
};

}  // namespace dtr
