#include "checker/engine/heuristic_policy.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <limits>

#include "checker/engine/exact_divide.h"
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

namespace {

// Below this pool size scanning is cheaper than keeping the index
// (docs/speed.md, "The score index").
constexpr int32_t kDefaultIndexFromPool = 1024;
std::atomic<int32_t> g_index_from_pool{kDefaultIndexFromPool};
std::atomic<bool> g_verify_index{false};
std::atomic<int64_t> g_indexed_choices{0};

}  // namespace

void HeuristicPolicy::set_index_from_pool(int32_t pool_size, bool verify) {
  g_index_from_pool.store(pool_size, std::memory_order_relaxed);
  g_verify_index.store(verify, std::memory_order_relaxed);
}

int64_t HeuristicPolicy::indexed_choices() { return g_indexed_choices.load(); }

StorageId HeuristicPolicy::Choose(Engine& engine, DecisionPoint* detail) {
  if (h_.cost == CostTerm::kRandom) {
    engine.CountEvaluations(1);
    std::uniform_int_distribution<int32_t> pick(0, engine.pool_size() - 1);
    int32_t k = pick(rng_);
    for (StorageId s : engine.pool_slots())
      if (s >= 0 && k-- == 0) {
        if (detail) detail->chosen = s;
        return s;
      }
    engine.SimrdAssertion("the eviction pool is empty");
  }
  if (!detail && Indexable() && engine.pool_size() >= g_index_from_pool.load(std::memory_order_relaxed))
    return ChooseIndexed(engine);
  int64_t evaluations = 0;
  const StorageId chosen = ChooseByScan(engine, detail, &evaluations);
  engine.CountEvaluations(evaluations);
  return chosen;
}

StorageId HeuristicPolicy::ChooseByScan(Engine& engine, DecisionPoint* detail, int64_t* evaluations_out) {
  const std::vector<StorageId>& pool = engine.pool_slots();
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
  *evaluations_out = evaluations;
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

bool HeuristicPolicy::Indexable() const {
  switch (h_.cost) {
    case CostTerm::kRegions:
    case CostTerm::kReverseRegion:
    case CostTerm::kLocal:
    case CostTerm::kOne: return true;
    default: return false;
  }
}

ScoreKey HeuristicPolicy::KeyOf(Engine& engine, StorageId s) {
  ScoreKey k;
  k.partial = h_.cost == CostTerm::kRegions && engine.regions().forward_deferred(s);
  const ScoreTerms t = Terms(engine, s, /*forward=*/!k.partial);
  k.cost = t.cost;
  k.divisor = h_.divide_by_size ? static_cast<uint64_t>(t.size) : 1;
  k.last = engine.last_access(s);
  return k;
}

void HeuristicPolicy::SyncIndex(Engine& engine) {
  ScoreIndex& index = engine.score_index();
  const std::vector<StorageId>& pool = engine.pool_slots();
  const int32_t formula = static_cast<int32_t>(h_.cost) * 4 + h_.divide_by_size * 2 + h_.divide_by_staleness;
  if (engine.tracks_score_changes() && index.formula() == formula && index.pool_epoch() == engine.pool_epoch() &&
      pool.size() <= static_cast<size_t>(index.capacity())) {
    engine.DrainScoreChanges([&](StorageId s) {
      const int32_t slot = engine.pool_position(s);
      if (slot < 0)
        index.Remove(s);
      else
        index.Place(s, slot, KeyOf(engine, s));
    });
    return;
  }
  // New, renumbered or full: build it anew from the pool.
  engine.TrackScoreChanges();
  engine.DrainScoreChanges([](StorageId) {});
  index.Reset(static_cast<int32_t>(2 * pool.size() + 1024), static_cast<int32_t>(engine.trace().storages.size()),
              h_.divide_by_staleness, formula, engine.pool_epoch());
  for (size_t slot = 0; slot < pool.size(); ++slot)
    if (pool[slot] >= 0) index.Place(pool[slot], static_cast<int32_t>(slot), KeyOf(engine, pool[slot]));
}

// The index's winner is simrd's choice once it is not a lower bound (a
// partial key's true score is at least its key's, so a complete winner
// beats every true score by the same order); a partial winner is walked
// and the index asked again.
StorageId HeuristicPolicy::ChooseIndexed(Engine& engine) {
  ScoreIndex& index = engine.score_index();
  const int64_t clock = engine.clock();
  ++g_indexed_choices;
  for (;;) {
    SyncIndex(engine);
    const int32_t slot = index.Winner(clock);
    if (slot < 0) engine.SimrdAssertion("the eviction pool is empty");
    const StorageId s = index.storage_at(slot);
    if (index.key(slot).partial) {
      engine.forward_region(s);  // walks it; the change is logged
      continue;
    }
    const int64_t evaluations = index.ScoreAt(slot, clock) == 0 ? index.Rank(slot) : engine.pool_size();
    if (g_verify_index.load(std::memory_order_relaxed)) VerifyIndexed(engine, s, evaluations);
    engine.CountEvaluations(evaluations);
    return s;
  }
}

void HeuristicPolicy::VerifyIndexed(Engine& engine, StorageId chosen, int64_t evaluations) {
  ScoreIndex& index = engine.score_index();
  const std::vector<StorageId>& pool = engine.pool_slots();
  auto fail = [&](const std::string& what) {
    throw std::logic_error(fmt::format("score index, decision {} at clock {}: {}", engine.decisions(),
                                       engine.clock(), what));
  };
  int32_t live = 0;
  for (size_t slot = 0; slot < pool.size(); ++slot) {
    const StorageId s = pool[slot];
    if (s < 0) continue;
    ++live;
    if (index.slot_of(s) != static_cast<int32_t>(slot))
      fail(fmt::format("storage {} is at slot {}, the index has it at {}", s, slot, index.slot_of(s)));
    const ScoreKey fresh = KeyOf(engine, s), &kept = index.key(static_cast<int32_t>(slot));
    if (fresh.cost != kept.cost || fresh.divisor != kept.divisor || fresh.last != kept.last ||
        fresh.partial != kept.partial)
      fail(fmt::format("the key of storage {} is stale (cost {} kept as {}, last access {} kept as {})", s,
                       fresh.cost, kept.cost, fresh.last, kept.last));
  }
  if (index.live() != live) fail(fmt::format("the index holds {} slots, the pool {}", index.live(), live));
  int64_t scanned = 0;
  const StorageId by_scan = ChooseByScan(engine, nullptr, &scanned);
  if (by_scan != chosen || scanned != evaluations)
    fail(fmt::format("chose storage {} after {} evaluations, the scan {} after {}", chosen, evaluations, by_scan,
                     scanned));
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
  // A staleness of +inf: size * inf is nan for size 0 (score inf), inf otherwise (score 0.0).
  return QuotientScore(t.cost, h_.divide_by_size ? static_cast<uint64_t>(t.size) : 1, h_.divide_by_staleness,
                       t.staleness);
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
