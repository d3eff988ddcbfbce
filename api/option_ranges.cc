#include "api/option_ranges.h"

#include <fmt/core.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "model/echo.h"
#include "model/error.h"

namespace dtr::api {

namespace {

std::string Outside(const std::string& text, const std::string& range) {
  return fmt::format("{} is outside the range {}", Echo(text), range);
}

// Whole-text unsigned parse into `value`; false unless every byte is a digit.
// `overflow` is set when the digits exceed uint64.
bool ParseDigits(const std::string& text, uint64_t& value, bool& overflow) {
  const char* end = text.data() + text.size();
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  overflow = ec == std::errc::result_out_of_range;
  return stop == end;
}

// Bounds at the edge of a type as powers of two: "2^63-1" reads better than
// 9223372036854775807.
std::string FormatBound(int64_t v) {
  if (v == std::numeric_limits<int64_t>::max()) return "2^63-1";
  if (v == std::numeric_limits<int32_t>::max()) return "2^31-1";
  if (v == std::numeric_limits<uint32_t>::max()) return "2^32-1";
  return fmt::format("{}", v);
}

std::string FormatReal(double v) {
  if (std::isinf(v)) return "inf";
  return fmt::format("{}", v);
}

[[noreturn]] void Refuse(const char* flag, const std::string& problem) {
  throw Error(fmt::format("{}: {} (see --help)", flag, problem));
}

}  // namespace

std::string IntegerRange::Text() const { return fmt::format("{}..{}", FormatBound(lo), FormatBound(hi)); }

std::string NumberRange::Text() const {
  return fmt::format("{}{}, {}{}", lo_included ? "[" : "(", FormatReal(lo), FormatReal(hi),
                     std::isinf(hi) ? ")" : "]");
}

std::string IntegerProblem(const IntegerRange& range, const std::string& text) {
  bool negative = !text.empty() && text[0] == '-';
  uint64_t magnitude = 0;
  bool overflow = false;
  if (!ParseDigits(negative ? text.substr(1) : text, magnitude, overflow))
    return fmt::format("'{}' is not an integer (expected one in {})", Echo(text), range.Text());
  // In 128 bits no value of 64-bit magnitude wraps; an overflow is beyond any bound.
  __int128 value = negative ? -static_cast<__int128>(magnitude) : magnitude;
  bool below = (negative && overflow) || value < range.lo;
  bool above = !negative && (overflow || value > range.hi);
  if (below || above) return Outside(text, range.Text());
  return "";
}

std::string NumberProblem(const NumberRange& range, const std::string& text) {
  const char* begin = text.c_str();
  char* stop = nullptr;
  double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                 ? NAN
                 : std::strtod(begin, &stop);
  if (stop != begin + text.size() || !std::isfinite(v))
    return fmt::format("'{}' is not a number (expected one in {})", Echo(text), range.Text());
  if (range.lo_included ? !(v >= range.lo) : !(v > range.lo)) return Outside(text, range.Text());
  if (!(v <= range.hi)) return Outside(text, range.Text());
  return "";
}

std::string Unsigned64Problem(const std::string& text) {
  const std::string range = "0..2^64-1";
  uint64_t value = 0;
  bool overflow = false;
  if (!text.empty() && text[0] == '-') {
    uint64_t ignored = 0;
    if (ParseDigits(text.substr(1), ignored, overflow)) return Outside(text, range);
  }
  if (!ParseDigits(text, value, overflow))
    return fmt::format("'{}' is not an integer (expected one in {})", Echo(text), range);
  if (overflow) return Outside(text, range);
  return "";
}

int64_t IntegerOption(const IntegerRange& range, const std::string& text) {
  if (std::string problem = IntegerProblem(range, text); !problem.empty()) Refuse(range.flag, problem);
  return std::stoll(text);
}

double NumberOption(const NumberRange& range, const std::string& text) {
  if (std::string problem = NumberProblem(range, text); !problem.empty()) Refuse(range.flag, problem);
  return std::strtod(text.c_str(), nullptr);
}

uint64_t SeedOption(const std::string& text) {
  if (std::string problem = Unsigned64Problem(text); !problem.empty()) Refuse("--seed", problem);
  return std::stoull(text);
}

Ratio RatioOption(const char* flag, const std::string& text) {
  try {
    return ParseRatio(text);
  } catch (const Error& e) {
    Refuse(flag, e.what());
  }
}

std::vector<Ratio> GridOption(const char* flag, const std::string& text) {
  try {
    return ParseRatios(text);
  } catch (const Error& e) {
    Refuse(flag, e.what());
  }
}

void CheckOption(const IntegerRange& range, int64_t value) { IntegerOption(range, fmt::format("{}", value)); }

void CheckOption(const NumberRange& range, double value) { NumberOption(range, FormatReal(value)); }

}  // namespace dtr::api
