// The score index (checker/engine/score_index.h) against simrd's scan of the pool,
// on random pools whose keys change between queries at a growing clock:
// small numbers with many exact ties, scores that tie only after rounding,
// numbers too large for the index's exact certificates, zeros, +inf, and
// storages never accessed. Every query's winner, and the evaluations simrd
// would count, must be the scan's.
#include "checker/engine/score_index.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

namespace dtr {
namespace {

struct Scan {
  int32_t slot = -1;
  int64_t evaluations = 0;
};

// simrd: keep the candidate whose score is <= the best so far, stop at 0.
Scan ScanPool(const std::vector<bool>& live, const std::vector<ScoreKey>& keys, bool by_staleness,
              int64_t clock) {
  Scan out;
  double best = INFINITY;
  for (size_t slot = 0; slot < live.size(); ++slot) {
    if (!live[slot]) continue;
    const ScoreKey& k = keys[slot];
    const double score = QuotientScore(k.cost, k.divisor, by_staleness,
                                       k.last == kNeverAccessed ? -1 : clock - k.last);
    ++out.evaluations;
    if (score <= best) {
      best = score;
      out.slot = static_cast<int32_t>(slot);
    }
    if (score == 0) break;
  }
  return out;
}

enum class Family { kSmall, kRoundingTies, kHuge, kMixed };

// zeros: 1 in `zeros` keys scores 0 (never accessed, or cost 0); 0: none.
ScoreKey RandomKey(std::mt19937_64& rng, Family family, int64_t clock, int zeros) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  ScoreKey k;
  // Last access at or before now, often recent, sometimes never.
  k.last = clock - std::min<int64_t>(clock, pick(0, 3) == 0 ? 0 : pick(0, 40));
  if (family == Family::kMixed) family = static_cast<Family>(pick(0, 2));
  switch (family) {
    case Family::kSmall:  // exact ties everywhere
      k.cost = pick(1, 6);
      k.divisor = static_cast<uint64_t>(pick(0, 4));
      break;
    case Family::kRoundingTies: {
      // cost / divisor within a few parts in 2^60 of each other: scores
      // that round to the same double without being equal.
      k.cost = (int64_t{1} << 60) + pick(0, 8);
      k.divisor = static_cast<uint64_t>(pick(1, 3));
      break;
    }
    case Family::kHuge:  // past the index's 125-bit products
      k.cost = (int64_t{1} << 62) - pick(0, 1000);
      k.divisor = (uint64_t{1} << 62) - static_cast<uint64_t>(pick(0, 1000));
      break;
    case Family::kMixed:
      break;
  }
  if (zeros > 0 && pick(1, zeros) == 1) {
    if (pick(0, 1))
      k.cost = 0;
    else
      k.last = kNeverAccessed;
  }
  return k;
}

void RunScenario(uint64_t seed, Family family, bool by_staleness, int64_t* queries,
                 int64_t* zero_wins) {
  std::mt19937_64 rng(seed);
  const int32_t slots = 1 + static_cast<int32_t>(rng() % 200);
  const int zeros = std::array{0, 0, 20, 400}[rng() % 4];
  const int32_t storages = slots + 20;
  ScoreIndex index;
  index.Reset(slots, storages, by_staleness, 0, 0);
  std::vector<bool> live(slots, false);
  std::vector<ScoreKey> keys(slots);
  std::vector<int32_t> slot_of(storages, -1);
  std::vector<StorageId> at(slots, -1);
  int64_t clock = 1;
  for (int round = 0; round < 300; ++round) {
    // Clock steps: none (several decisions at one point), small, or large.
    switch (rng() % 4) {
      case 0:
        break;
      case 1:
        clock += 1;
        break;
      case 2:
        clock += static_cast<int64_t>(rng() % 50);
        break;
      case 3:
        clock += static_cast<int64_t>(rng() % (int64_t{1} << 40));
        break;
    }
    const int changes = static_cast<int>(rng() % 12);
    for (int c = 0; c < changes; ++c) {
      const StorageId s = static_cast<StorageId>(rng() % storages);
      if (rng() % 4 == 0) {  // leaves the pool
        if (slot_of[s] >= 0) {
          live[slot_of[s]] = false;
          at[slot_of[s]] = -1;
          slot_of[s] = -1;
        }
        index.Remove(s);
        continue;
      }
      int32_t slot = slot_of[s];
      if (slot < 0 || rng() % 3 == 0) {  // (re)enters at a free slot
        slot = static_cast<int32_t>(rng() % slots);
        if (at[slot] >= 0 && at[slot] != s) continue;
        if (slot_of[s] >= 0) {
          live[slot_of[s]] = false;
          at[slot_of[s]] = -1;
        }
      }
      keys[slot] = RandomKey(rng, family, clock, zeros);
      live[slot] = true;
      at[slot] = s;
      slot_of[s] = slot;
      index.Place(s, slot, keys[slot]);
    }
    const Scan scan = ScanPool(live, keys, by_staleness, clock);
    const int32_t winner = index.Winner(clock);
    INFO("seed ", seed, " round ", round, " clock ", clock);
    REQUIRE(winner == scan.slot);
    if (winner < 0) continue;
    CHECK(index.storage_at(winner) == at[winner]);
    const int64_t pool = std::count(live.begin(), live.end(), true);
    const bool zero = index.ScoreAt(winner, clock) == 0;
    CHECK((zero ? index.Rank(winner) : pool) == scan.evaluations);
    ++*queries;
    *zero_wins += zero;
  }
}

TEST_CASE("score index: the winner and evaluation count are the scan's") {
  uint64_t first = 1, last = 400;
  if (const char* env = std::getenv("DTRCHECK_SEED"))
    first = last = std::strtoull(env, nullptr, 10);
  int64_t queries = 0, zero_wins = 0;
  for (uint64_t seed = first; seed <= last; ++seed)
    for (Family family : {Family::kSmall, Family::kRoundingTies, Family::kHuge, Family::kMixed})
      for (bool by_staleness : {true, false})
        RunScenario(seed * 8 + static_cast<uint64_t>(family) * 2 + by_staleness, family,
                    by_staleness, &queries, &zero_wins);
  MESSAGE(queries, " queries, ", zero_wins, " won by a score of 0");
  if (first != last) {
    CHECK(zero_wins > queries / 10);  // both kinds of winner are common
    CHECK(zero_wins < queries / 2);
  }
}

// Scores that round to one double without being equal: the later slot wins
// the tie, and the index must see the tie come and go as the clock moves.
TEST_CASE("score index: ties after rounding follow the clock") {
  ScoreIndex index;
  index.Reset(4, 4, true, 0, 0);
  // (2^60 + 1) / (T - 0) and 2^60 / (T - 0): the first is larger by a
  // relative 2^-60, so the floats are equal, and the later slot (1) wins.
  index.Place(0, 0, ScoreKey{(int64_t{1} << 60) + 1, 1, 0, false});
  index.Place(1, 1, ScoreKey{int64_t{1} << 60, 1, 0, false});
  CHECK(index.Winner(1000) == 1);
  // Slot 0 now strictly smaller by far: it wins from then on.
  index.Place(0, 0, ScoreKey{int64_t{1} << 59, 1, 0, false});
  CHECK(index.Winner(1001) == 0);
  // Equal costs, accessed at 0 and 1: slot 1 (staler by less) scores more
  // until the two round together, far in the future; then the later wins.
  index.Place(0, 0, ScoreKey{1000, 1, 0, false});
  index.Place(1, 1, ScoreKey{1000, 1, 1, false});
  CHECK(index.Winner(1002) == 0);
  CHECK(index.Winner(int64_t{1} << 60) == 1);
}

}  // namespace
}  // namespace dtr
