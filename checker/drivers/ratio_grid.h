// Budget ratios as the user writes them. "A:B:STEP" is the decimal grid A,
// A+STEP, ..., B computed in decimal and then parsed, so 0.085:0.125:0.001
// contains exactly the double nearest 0.102, the same number as typing 0.102
// alone (and so the same budget). "r1,r2,..." is a list; "r" one ratio.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dtr {

struct Ratio {
  double value;
  std::string text;  // decimal text the value was parsed from
};

// Throws Error naming the problem for malformed text or a ratio <= 0.
std::vector<Ratio> ParseRatios(std::string_view spec);
Ratio ParseRatio(std::string_view text);

}  // namespace dtr
