// Numeric flags with a documented range (docs/cli.md). A range validator
// reads the flag's text before CLI11 converts it: the whole text must be a
// number (no clamping of out-of-range integers, no trailing characters) inside
// the range, else the command line is refused with exit status 2 and a message
// naming the flag, the value and the range:
//   dtrcheck: -j: 0 is outside the range 1..1024 (see --help)
// --help shows the range after the type: "-j,--jobs INT:1..1024".
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>

namespace dtr::cli {

inline constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

// Integers from lo to hi, both included ("1..1024"; a bound at the edge of
// int32 or int64 is written 2^31-1 or 2^63-1).
CLI::Validator IntegerIn(int64_t lo, int64_t hi);

// Any unsigned 64-bit integer ("0..2^64-1"); for seeds.
CLI::Validator AnyUnsigned64();

// Finite numbers above lo (lo excluded: "(1, inf)") or from lo (included:
// "[0, inf)"), and at most hi ("(0, 86400]").
CLI::Validator NumberAbove(double lo, double hi = std::numeric_limits<double>::infinity());
CLI::Validator NumberFrom(double lo, double hi = std::numeric_limits<double>::infinity());

// A ratio (checker/ratio_grid.h: a decimal above 0) and a grid of them
// (A:B:STEP or r1,r2,...), refused with the parser's message after the
// flag's name: "--ratios: ratio 0 of grid '0:0.5:0.1' must be greater than 0".
CLI::Validator RatioText();
CLI::Validator RatioGridText();

}  // namespace dtr::cli
