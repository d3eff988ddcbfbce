#include "checker/engine/exact_divide.h"

#include <cmath>

namespace dtr {

namespace {

int BitLength(uint128 x) {
  uint64_t hi = static_cast<uint64_t>(x >> 64);
  if (hi) return 128 - __builtin_clzll(hi);
  uint64_t lo = static_cast<uint64_t>(x);
  return lo ? 64 - __builtin_clzll(lo) : 0;
}

// Converts q * 2^exp to double, where q carries at least 55 significant bits
// and its lowest bit is a sticky bit (set when the dropped remainder is not
// zero), so that the hardware's round-half-even conversion is exact.
double Scale(uint128 q, int exp) {
  int extra = BitLength(q) - 64;
  if (extra > 0) {  // keep 64 bits, folding the rest into the sticky bit
    bool sticky = (q & ((static_cast<uint128>(1) << extra) - 1)) != 0;
    q >>= extra;
    q |= sticky;
    exp += extra;
  }
  return std::ldexp(static_cast<double>(static_cast<uint64_t>(q)), exp);
}

}  // namespace

double ExactDivide(uint64_t num, uint128 den) {
  if (num == 0) return 0.0;
  constexpr uint128 kExact = static_cast<uint128>(1) << 53;
  if (num < kExact && den < kExact)  // both exact as doubles: IEEE division rounds correctly
    return static_cast<double>(num) / static_cast<double>(static_cast<uint64_t>(den));

  // Quotient with >= 55 significant bits: q = floor(num * 2^shift / den),
  // or floor(num / (den * 2^-shift)) when den is small.
  int shift = 55 - (BitLength(num) - BitLength(den));
  uint128 q, rem;
  if (shift <= 0) {
    uint128 d = den << -shift;  // den < num here, so this fits
    q = num / d;
    rem = num % d;
  } else if (BitLength(num) + shift <= 127) {
    uint128 n = static_cast<uint128>(num) << shift;
    q = n / den;
    rem = n % den;
  } else {
    // Long division one bit at a time: r < den always, and den < 2^127.
    uint128 r = num % den;
    q = num / den;
    for (int i = 0; i < shift; ++i) {
      r <<= 1;
      q <<= 1;
      if (r >= den) {
        r -= den;
        q |= 1;
      }
    }
    rem = r;
  }
  if (rem != 0) q |= 1;
  return Scale(q, -shift);
}

}  // namespace dtr
