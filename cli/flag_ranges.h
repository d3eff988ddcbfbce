// Numeric flags with a documented range (docs/cli.md), as CLI11 validators.
// The ranges of the options the front door shares are defined once in
// api/option_ranges.h; a validator reads the flag's text before CLI11
// converts it and refuses it with exit status 2 and the message the front
// door gives any other caller:
//   dtrcheck: --jobs: 0 is outside the range 1..1024 (see --help)
// --help shows the range after the type: "-j,--jobs INT:1..1024".
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>

#include "api/option_ranges.h"

namespace dtr::cli {

using api::kMaxInt32;
using api::kMaxInt64;

// A range of api/option_ranges.h.
CLI::Validator InRange(const api::IntegerRange& range);
CLI::Validator InRange(const api::NumberRange& range);

// Ranges of flags only the CLI has: integers from lo to hi, both included;
// finite numbers above lo (excluded) or from lo (included), at most hi.
CLI::Validator IntegerIn(int64_t lo, int64_t hi);
CLI::Validator NumberAbove(double lo, double hi = std::numeric_limits<double>::infinity());
CLI::Validator NumberFrom(double lo, double hi = std::numeric_limits<double>::infinity());

// Any unsigned 64-bit integer ("0..2^64-1"); for seeds.
CLI::Validator AnyUnsigned64();

// A ratio (checker/drivers/ratio_grid.h: a decimal above 0) and a grid of them
// (A:B:STEP or r1,r2,...), refused with the parser's message after the
// flag's name: "--ratios: ratio 0 of grid '0:0.5:0.1' must be greater than 0".
CLI::Validator RatioText();
CLI::Validator RatioGridText();

}  // namespace dtr::cli
