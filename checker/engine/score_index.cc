#include "checker/engine/score_index.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace dtr {

namespace {

using int128 = __int128;

// Where a key's score stands at a clock.
enum class Phase {
  kZero,     // 0 from now on
  kInf,      // +inf from now on
  kInfNow,   // +inf now (staleness 0), finite from the next clock on
  kFixed,    // a positive constant
  kFalling,  // cost / (divisor * (T - last)), positive, falling with T
};

Phase PhaseOf(const ScoreKey& k, bool by_staleness, int64_t clock) {
  if (by_staleness && k.last == kNeverAccessed) return k.divisor == 0 ? Phase::kInf : Phase::kZero;
  if (k.divisor == 0) return Phase::kInf;
  if (by_staleness && clock == k.last) return Phase::kInfNow;
  if (k.cost == 0) return Phase::kZero;
  return by_staleness ? Phase::kFalling : Phase::kFixed;
}

// a * b if it is below 2^125 (so that sums and differences of two such
// products fit a signed 128-bit integer); false otherwise.
bool SmallProduct(uint128 a, uint128 b, uint128* out) {
  constexpr uint128 kLimit = static_cast<uint128>(1) << 125;
  uint128 p;
  if (__builtin_mul_overflow(a, b, &p) || p >= kLimit) return false;
  *out = p;
  return true;
}

// |g| <= 2^-50 s: the two floats may tie (or may not keep g's sign).
bool MayTie(int128 g, int128 s) {
  const int128 mag = g < 0 ? -g : g;
  return mag <= (s >> 50);
}

int Sign(int128 v) { return (v > 0) - (v < 0); }

}  // namespace

void ScoreIndex::Reset(int32_t capacity, int32_t storages, bool by_staleness, int32_t formula,
                       int64_t pool_epoch) {
  pool_epoch_ = pool_epoch;
  capacity_ = static_cast<int32_t>(std::bit_ceil(static_cast<uint32_t>(std::max(capacity, 2))));
  by_staleness_ = by_staleness;
  formula_ = formula;
  storage_at_.assign(capacity_, -1);
  slot_of_.assign(storages, -1);
  const size_t nodes = 2 * static_cast<size_t>(capacity_);
  win_.assign(nodes, -1);
  expiry_.assign(nodes, kForever);
  sub_expiry_.assign(nodes, kForever);
  count_.assign(nodes, 0);
  keys_.assign(capacity_, ScoreKey{});
  score_.assign(capacity_, 0);
  score_clock_.assign(capacity_, kDirty);
}

void ScoreIndex::Place(StorageId s, int32_t slot, const ScoreKey& key) {
  if (slot_of_[s] != slot) {
    Remove(s);
    if (storage_at_[slot] >= 0) slot_of_[storage_at_[slot]] = -1;
    slot_of_[s] = slot;
    storage_at_[slot] = s;
  }
  keys_[slot] = key;
  score_clock_[slot] = kDirty;
  const int32_t leaf = capacity_ + slot;
  win_[leaf] = slot;
  count_[leaf] = 1;
  MarkDirty(leaf >> 1);
}

void ScoreIndex::Remove(StorageId s) {
  const int32_t slot = slot_of_[s];
  if (slot < 0) return;
  slot_of_[s] = -1;
  storage_at_[slot] = -1;
  Clear(slot);
}

void ScoreIndex::Clear(int32_t slot) {
  const int32_t leaf = capacity_ + slot;
  if (win_[leaf] < 0) return;
  win_[leaf] = -1;
  count_[leaf] = 0;
  MarkDirty(leaf >> 1);
}

// Invariant: the ancestors of a dirty node are dirty.
void ScoreIndex::MarkDirty(int32_t node) {
  for (; node >= 1 && sub_expiry_[node] != kDirty; node >>= 1) sub_expiry_[node] = kDirty;
}

double ScoreIndex::ScoreAt(int32_t slot, int64_t clock) const {
  const ScoreKey& k = keys_[slot];
  const int64_t staleness = k.last == kNeverAccessed ? -1 : clock - k.last;
  return QuotientScore(k.cost, k.divisor, by_staleness_, staleness);
}

double ScoreIndex::CachedScore(int32_t slot, int64_t clock) {
  if (score_clock_[slot] != clock) {
    score_[slot] = ScoreAt(slot, clock);
    score_clock_[slot] = clock;
  }
  return score_[slot];
}

int32_t ScoreIndex::Winner(int64_t clock) {
  if (capacity_ == 0) return -1;
  if (sub_expiry_[1] <= clock) Visit(1, clock);
  return win_[1];
}

void ScoreIndex::Visit(int32_t node, int64_t clock) {
  const int32_t left = 2 * node, right = left + 1;
  const bool inner = left < capacity_;
  if (inner) {
    if (sub_expiry_[left] <= clock) Visit(left, clock);
    if (sub_expiry_[right] <= clock) Visit(right, clock);
  }
  ++recomputations_;
  const int32_t a = win_[left], b = win_[right];  // every slot under left < every slot under right
  int64_t expiry = kForever;
  if (a < 0 || b < 0) {
    win_[node] = a < 0 ? b : a;
  } else {
    const double sa = CachedScore(a, clock), sb = CachedScore(b, clock);
    win_[node] = (sb < sa || (sb == sa && sb != 0)) ? b : a;
    expiry = Certificate(keys_[a], keys_[b], clock);
  }
  expiry_[node] = expiry;
  count_[node] = count_[left] + count_[right];
  sub_expiry_[node] = inner ? std::min({expiry, sub_expiry_[left], sub_expiry_[right]}) : expiry;
}

int32_t ScoreIndex::Rank(int32_t slot) const {
  int32_t rank = 1;
  for (int32_t node = capacity_ + slot; node > 1; node >>= 1)
    if (node & 1) rank += count_[node - 1];
  return rank;
}

// Why the expiry is sound. While both scores are positive and finite,
// a beats b strictly iff g = x - y < 0, where x = alpha * sa(T),
// y = beta * sb(T), alpha = C_a D_b, beta = C_b D_a, and s(T) is T - last
// for a falling score and 1 for a fixed one (x < y iff C_a / (D_a s_a) <
// C_b / (D_b s_b)). g and s = x + y are linear in T. Two floats that round
// to the same double differ by less than 2^-51 of the larger; x / y is the
// ratio of the scores, so when |g| > 2^-50 s the floats differ and keep g's
// sign: the outcome is g's sign alone. r = g / s is monotone in T (s > 0),
// and r(T0 + d) = (s(T0) r(T0) + s' d (g' / s')) / (s(T0) + s' d) lies
// between r(T0) and the limit g' / s'. So:
//  - g == 0 for every T: the floats are equal forever and the tie rule
//    decides forever;
//  - r(T0) outside the tie band and the limit on the same side, outside
//    too: the outcome holds forever;
//  - else the outcome holds up to any T1 whose r(T1) is on r(T0)'s side
//    outside the band: T1 is estimated in long double where r reaches
//    2^-45 and then checked exactly; failing that, only T0 is certain.
// Products that do not fit 125 bits fall back to "only T0" as well.
int64_t ScoreIndex::Certificate(const ScoreKey& a, const ScoreKey& b, int64_t clock) const {
  const int64_t next = clock == kForever ? kForever : clock + 1;
  const Phase pa = PhaseOf(a, by_staleness_, clock), pb = PhaseOf(b, by_staleness_, clock);
  if (pa == Phase::kInfNow || pb == Phase::kInfNow) return next;
  // 0 beats every positive score and +inf loses to every finite one, and
  // neither changes: so does the outcome.
  if (pa == Phase::kZero || pa == Phase::kInf || pb == Phase::kZero || pb == Phase::kInf)
    return kForever;
  if (pa == Phase::kFixed && pb == Phase::kFixed) return kForever;
  uint128 alpha, beta;
  if (!SmallProduct(static_cast<uint128>(a.cost), b.divisor, &alpha) ||
      !SmallProduct(static_cast<uint128>(b.cost), a.divisor, &beta))
    return next;
  const bool a_falls = pa == Phase::kFalling, b_falls = pb == Phase::kFalling;
  // g(T) and s(T) exactly; false if they do not fit.
  auto at = [&](int64_t t, int128* g, int128* s) {
    const uint128 sa = a_falls ? static_cast<uint128>(t - a.last) : 1;
    const uint128 sb = b_falls ? static_cast<uint128>(t - b.last) : 1;
    uint128 x, y;
    if (!SmallProduct(alpha, sb, &x) || !SmallProduct(beta, sa, &y)) return false;
    *g = static_cast<int128>(x) - static_cast<int128>(y);
    *s = static_cast<int128>(x) + static_cast<int128>(y);
    return true;
  };
  int128 g0, s0;
  if (!at(clock, &g0, &s0)) return next;
  const int128 dg =
      (b_falls ? static_cast<int128>(alpha) : 0) - (a_falls ? static_cast<int128>(beta) : 0);
  const int128 ds =
      (b_falls ? static_cast<int128>(alpha) : 0) + (a_falls ? static_cast<int128>(beta) : 0);
  if (g0 == 0 && dg == 0) return kForever;
  if (MayTie(g0, s0)) return next;
  if (Sign(dg) == Sign(g0) && !MayTie(dg, ds)) return kForever;
  // Where r reaches theta = sign(g0) 2^-45 (between r(T0) and the band).
  const long double theta = std::ldexp(static_cast<long double>(Sign(g0)), -45);
  const long double d = (static_cast<long double>(g0) - theta * static_cast<long double>(s0)) /
                        (theta * static_cast<long double>(ds) - static_cast<long double>(dg));
  const long double room = static_cast<long double>(kForever - 1 - clock);
  if (!(d >= 2)) return next;
  const int64_t t1 = clock + static_cast<int64_t>(std::floor(std::min(d, room))) - 1;
  int128 g1, s1;
  if (!at(t1, &g1, &s1) || Sign(g1) != Sign(g0) || MayTie(g1, s1)) return next;
  return t1 + 1;
}

}  // namespace dtr
