#include "reports/number_format.h"

#include <fmt/core.h>

#include <cmath>

#include "checker/engine/replay.h"

namespace dtr {

std::string GroupedInt(int64_t n) {
  uint64_t magnitude = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  std::string digits = std::to_string(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string HumanBytes(int64_t b) {
  double v = static_cast<double>(b);
  if (std::abs(v) >= 1e9) return fmt::format("{:.2f} GB", v / 1e9);
  if (std::abs(v) >= 1e6) return fmt::format("{:.2f} MB", v / 1e6);
  if (std::abs(v) >= 1e3) return fmt::format("{:.2f} kB", v / 1e3);
  return fmt::format("{} B", b);
}

std::string CompactBytes(int64_t b) {
  double v = static_cast<double>(b);
  if (std::abs(v) >= 1e9) return fmt::format("{:.3g} GB", v / 1e9);
  if (std::abs(v) >= 1e6) return fmt::format("{:.3g} MB", v / 1e6);
  if (std::abs(v) >= 1e3) return fmt::format("{:.3g} kB", v / 1e3);
  return fmt::format("{} B", b);
}

std::string ShortDouble(double v) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : (v < 0 ? "-inf" : "nan");
  return fmt::format("{:.4g}", v);
}

std::string ByteInterval(int64_t lo, int64_t hi) {
  return fmt::format("[{}, {}]", GroupedInt(lo),
                     hi == kInfiniteBudget ? std::string("inf") : GroupedInt(hi));
}

}  // namespace dtr
