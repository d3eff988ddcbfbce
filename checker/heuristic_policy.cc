#include "checker/heuristic_policy.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

#include "checker/exact_divide.h"
#include "model/error.h"

namespace dtr {

HeuristicPolicy::HeuristicPolicy(const HeuristicSpec& heuristic, uint64_t seed) : h_(heuristic), rng_(seed) {}

void HeuristicPolicy::CheckSupported(const HeuristicSpec& heuristic, RuntimeKind runtime) {
  unsigned supported = kFeatureLastAccess;
  if (OptimizedRuntime(runtime)) supported |= kFeatureRegions | kFeatureEqClass;
  unsigned missing = heuristic.features & ~supported;
  if (missing)
    throw Error(fmt::format("heuristic {} needs {}, which {} does not maintain (use RuntimeV2Optimized or "
                            "RuntimeV2EagerOptimized)",
                            heuristic.name, (missing & kFeatureRegions) ? "evicted regions" : "equivalence classes",
                            RuntimeName(runtime)));
}

StorageId HeuristicPolicy::Choose(Engine& engine, DecisionPoint* detail) {
  const std::vector<StorageId>& pool = engine.pool_slots();
  if (h_.cost == CostTerm::kRandom) {
    engine.CountEvaluations(1);
    std::uniform_int_distribution<int32_t> pick(0, engine.pool_size() - 1);
    int32_t k = pick(rng_);
    for (StorageId s : pool)
      if (s >= 0 && k-- == 0) {
        if (detail) detail->chosen = s;
        return s;
      }
    engine.SimrdAssertion("the eviction pool is empty");
  }
  double best = std::numeric_limits<double>::infinity(), second = best;
  StorageId best_s = -1, second_s = -1;
  int64_t evaluations = 0;
  if (detail) {
    for (StorageId s : pool) {
      if (s < 0) continue;
      double score = Score(engine, s);
      ++evaluations;
      if (score <= best) {  // the last of equal scores wins
        second = best;
        second_s = best_s;
        best = score;
        best_s = s;
      } else if (score <= second) {
        second = score;
        second_s = s;
      }
      if (score == 0) break;
    }
  } else {
    // A storage whose forward region is not walked yet scores at least what
    // it would without that region's compute; when that already loses to
    // the best so far (and is not 0, which would end the scan), its score is
    // not needed and the region stays unwalked.
    const bool bound = h_.cost == CostTerm::kRegions;
    for (StorageId s : pool) {
      if (s < 0) continue;
      if (bound && engine.regions().forward_deferred(s)) {
        ScoreTerms t = Terms(engine, s, /*forward=*/false);
        const double lower = ScoreOf(t);
        if (lower > best && lower > 0) {
          ++evaluations;
          continue;
        }
      }
      double score = Score(engine, s);
      ++evaluations;
      if (score <= best) {
        best = score;
        best_s = s;
      }
      if (score == 0) break;
    }
  }
  engine.CountEvaluations(evaluations);
  if (best_s < 0) engine.SimrdAssertion("no storage scored at most +inf");
  if (detail) {
    detail->chosen = best_s;
    detail->score = best;
    detail->terms = Terms(engine, best_s);
    detail->runner_up = second_s;
    detail->runner_up_score = second;
    if (second_s >= 0) detail->runner_up_terms = Terms(engine, second_s);
  }
  return best_s;
}

std::optional<std::pair<double, ScoreTerms>> HeuristicPolicy::Explain(Engine& engine, StorageId s) {
  if (h_.cost == CostTerm::kRandom) return std::nullopt;
  return std::make_pair(Score(engine, s), Terms(engine, s));
}

// simrd's evaluate() of each heuristic, from the terms: cost / (size *
// staleness) with the factors the heuristic uses; +inf for a zero denominator.
double HeuristicPolicy::Score(Engine& engine, StorageId s) { return ScoreOf(Terms(engine, s)); }

double HeuristicPolicy::ScoreOf(const ScoreTerms& t) const {
  if (h_.cost == CostTerm::kLastAccess)
    return t.cost == kNeverAccessed ? -std::numeric_limits<double>::infinity() : static_cast<double>(t.cost);
  if (!h_.divide_by_size && !h_.divide_by_staleness) return static_cast<double>(t.cost);
  uint128 den = h_.divide_by_size ? static_cast<uint128>(t.size) : 1;
  if (h_.divide_by_staleness) {
    if (t.staleness < 0) {
      // staleness is +inf: size * inf is nan for size 0 (score inf), inf otherwise (score 0.0).
      return den == 0 ? std::numeric_limits<double>::infinity() : 0.0;
    }
    den *= static_cast<uint128>(t.staleness);
  }
  if (den == 0) return std::numeric_limits<double>::infinity();
  if (t.cost < 0) return -ExactDivide(static_cast<uint64_t>(-t.cost), den);
  return ExactDivide(static_cast<uint64_t>(t.cost), den);
}

// The terms of s's score under this heuristic (see ScoreTerms).
ScoreTerms HeuristicPolicy::Terms(Engine& engine, StorageId s, bool forward) {
  ScoreTerms t;
  const int64_t last = engine.last_access(s);
  t.size = engine.trace().storages[s].size;
  t.staleness = last == kNeverAccessed ? -1 : engine.clock() - last;
  switch (h_.cost) {
    case CostTerm::kRegions:
      t.cost = engine.storage_compute(s) + (forward ? engine.forward_region(s).compute : 0) +
               engine.regions().reverse(s).compute;
      break;
    case CostTerm::kReverseRegion: t.cost = engine.storage_compute(s) + engine.regions().reverse(s).compute; break;
    case CostTerm::kEqClass: t.cost = engine.EqClassCompute(s); break;
    case CostTerm::kLocal: t.cost = engine.storage_compute(s); break;
    case CostTerm::kOne: t.cost = 1; break;
    case CostTerm::kLastAccess: t.cost = last; break;
    case CostTerm::kUnoptimized: {
      engine.WalkEvictedRegion(s, false, unopt_fwd_);
      engine.WalkEvictedRegion(s, true, unopt_rev_);
      int64_t newest = last;
      t.cost = engine.storage_compute(s);
      if (mark_.size() != engine.trace().storages.size()) mark_.assign(engine.trace().storages.size(), 0);
      if (++stamp_ == 0) {
        std::fill(mark_.begin(), mark_.end(), 0);
        stamp_ = 1;
      }
      for (const std::vector<StorageId>* interior : {&unopt_fwd_, &unopt_rev_})
        for (StorageId u : *interior) {
          if (mark_[u] != stamp_) {
            mark_[u] = stamp_;
            t.cost += engine.storage_compute(u);
            int64_t lu = engine.last_access(u);
            if (lu != kNeverAccessed && (newest == kNeverAccessed || lu > newest)) newest = lu;
          }
        }
      t.staleness = newest == kNeverAccessed ? -1 : engine.clock() - newest;
      break;
    }
    case CostTerm::kRandom: break;
  }
  return t;
}

}  // namespace dtr
