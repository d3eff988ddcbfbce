// The numeric options of the commands, each named and ranged once
// (docs/cli.md). The CLI's flags check their text with these ranges before
// CLI11 converts it (cli/flag_ranges.h), and the front door checks the same
// values again for every other caller (the Python module), so a value either
// is refused everywhere with the same message or nowhere:
//   --jobs: 0 is outside the range 1..1024 (see --help)
// A check reads the value as text: the whole text must be a number (no
// clamping of out-of-range integers, no trailing characters) inside the range.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "checker/drivers/ratio_grid.h"

namespace dtr::api {

inline constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

// Integers from lo to hi, both included ("1..1024"; a bound at the edge of
// int32, uint32 or int64 is written 2^31-1, 2^32-1 or 2^63-1).
struct IntegerRange {
  const char* flag;  // the long flag, as messages name it: "--jobs"
  int64_t lo, hi;
  std::string Text() const;
};

// Finite numbers above lo (lo excluded: "(1, inf)") or from lo (included:
// "[0, inf)"), and at most hi ("(0, 86400]").
struct NumberRange {
  const char* flag;
  double lo;
  bool lo_included;
  double hi = std::numeric_limits<double>::infinity();
  std::string Text() const;
};

// The options' ranges.
inline constexpr IntegerRange kJobs{"--jobs", 1, 1024};
inline constexpr IntegerRange kBudget{"--budget", 0, kMaxInt64};
inline constexpr IntegerRange kMaxWalk{"--max-walk", 0, 1000000};
inline constexpr IntegerRange kWindows{"--windows", 0, 1000};
inline constexpr IntegerRange kWindowOps{"--window-ops", 1, 1000};
inline constexpr IntegerRange kWorkLimit{"--work-limit", 0, std::numeric_limits<uint32_t>::max()};
inline constexpr IntegerRange kAtlasMaxRuns{"--atlas-max-runs", 1, 1000000000};
inline constexpr IntegerRange kAtlasMaxEvals{"--atlas-max-evals", 1, kMaxInt64};
inline constexpr IntegerRange kNextUseComputations{"--next-use-computations", 1, kMaxInt64};
inline constexpr IntegerRange kMaxVerdicts{"--max-verdicts", 1, 1000000000};
inline constexpr IntegerRange kMaxRuns{"--max-runs", 0, kMaxInt64};
inline constexpr IntegerRange kMaxEvals{"--max-evals", 0, kMaxInt64};
inline constexpr IntegerRange kRollingOps{"--rolling-z3", 0, 1000};
inline constexpr NumberRange kPlanSeconds{"--plan-seconds", 0, true};
inline constexpr NumberRange kOverheadLimit{"--overhead-limit", 1, true};
inline constexpr NumberRange kCliffFactor{"--cliff-factor", 1, false};
inline constexpr NumberRange kTimeout{"--timeout", 0, true, 86400};
inline constexpr IntegerRange kDecision{"--at", 0, kMaxInt64};
inline constexpr NumberRange kSearchSeconds{"--search-seconds", 0, true};
inline constexpr IntegerRange kWalkSearches{"--walk-searches", 0, 1000000};
inline constexpr NumberRange kCutSeconds{"--cut-seconds", 0, true};
inline constexpr IntegerRange kPlanWork{"--plan-work", 0, kMaxInt64};
inline constexpr NumberRange kPlanMaxOverhead{"--plan-max-overhead", 1, true};

// The problem with `text` as a value of the range, or "" when it is one:
// "-1 is outside the range 1..1024", "'x' is not an integer (expected one in
// 1..1024)".
std::string IntegerProblem(const IntegerRange& range, const std::string& text);
std::string NumberProblem(const NumberRange& range, const std::string& text);
// Any unsigned 64-bit integer ("0..2^64-1"); for seeds.
std::string Unsigned64Problem(const std::string& text);

// The value of `text`, or Error "FLAG: PROBLEM (see --help)", the line the
// CLI prints for that flag.
int64_t IntegerOption(const IntegerRange& range, const std::string& text);
double NumberOption(const NumberRange& range, const std::string& text);
uint64_t SeedOption(const std::string& text);

// A ratio (a decimal above 0) and a grid of them (A:B:STEP or r1,r2,...;
// checker/drivers/ratio_grid.h), or Error with the parser's message after the flag:
// "--ratios: ratio 0 of grid '0:0.5:0.1' must be greater than 0 (see --help)".
Ratio RatioOption(const char* flag, const std::string& text);
std::vector<Ratio> GridOption(const char* flag, const std::string& text);

// The same checks for values that are numbers already: Error as above unless
// the value, written as the CLI would read it, is in the range.
void CheckOption(const IntegerRange& range, int64_t value);
void CheckOption(const NumberRange& range, double value);

}  // namespace dtr::api
