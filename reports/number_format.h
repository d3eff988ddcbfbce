// Number formatting shared by the text, Markdown and HTML renderers.
#pragma once

#include <cstdint>
#include <string>

namespace dtr {

std::string GroupedInt(int64_t n);        // 5767168 -> "5,767,168"
std::string HumanBytes(int64_t bytes);    // decimal units: "5.77 MB", "10.06 GB", "512 B"
std::string CompactBytes(int64_t bytes);  // for axis ticks: "800 MB", "1.2 GB", "0 B"
std::string ShortDouble(double v);        // at most 4 significant digits: "1.91", "0.0003", "12500"
// A budget interval "[lo, hi]" with grouped digits; hi = kInfiniteBudget prints as "inf".
std::string ByteInterval(int64_t lo, int64_t hi);

}  // namespace dtr
