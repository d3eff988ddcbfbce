// Python's true division of two integers, `a / b`, is the correctly rounded
// (round-half-even) double of the exact quotient, even when b exceeds 2^53.
// simrd's scores are such quotients (compute / (size * staleness)), and ties
// between them decide evictions, so we reproduce them bit for bit.
#pragma once

#include <cstdint>

namespace dtr {

using uint128 = unsigned __int128;

// REQUIRES: den > 0.
double ExactDivide(uint64_t num, uint128 den);

}  // namespace dtr
