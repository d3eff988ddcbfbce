#include "cli/flag_ranges.h"

#include <fmt/core.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "checker/ratio_grid.h"
#include "model/echo.h"
#include "model/error.h"

namespace dtr::cli {

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

CLI::Validator Number(double lo, bool lo_included, double hi) {
  std::string range = fmt::format("{}{}, {}{}", lo_included ? "[" : "(", FormatReal(lo),
                                  FormatReal(hi), std::isinf(hi) ? ")" : "]");
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* stop = nullptr;
        double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                       ? NAN
                       : std::strtod(begin, &stop);
        if (stop != begin + text.size() || !std::isfinite(v))
          return fmt::format("'{}' is not a number (expected one in {})", Echo(text), range);
        if (lo_included ? !(v >= lo) : !(v > lo)) return Outside(text, range);
        if (!(v <= hi)) return Outside(text, range);
        return "";
      },
      range);
}

}  // namespace

CLI::Validator IntegerIn(int64_t lo, int64_t hi) {
  std::string range = fmt::format("{}..{}", FormatBound(lo), FormatBound(hi));
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        bool negative = !text.empty() && text[0] == '-';
        uint64_t magnitude = 0;
        bool overflow = false;
        if (!ParseDigits(negative ? text.substr(1) : text, magnitude, overflow))
          return fmt::format("'{}' is not an integer (expected one in {})", Echo(text), range);
        // In 128 bits no value of 64-bit magnitude wraps; an overflow is beyond any bound.
        __int128 value = negative ? -static_cast<__int128>(magnitude) : magnitude;
        bool below = (negative && overflow) || value < lo;
        bool above = !negative && (overflow || value > hi);
        if (below || above) return Outside(text, range);
        return "";
      },
      range);
}

CLI::Validator AnyUnsigned64() {
  const std::string range = "0..2^64-1";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
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
      },
      range);
}

CLI::Validator NumberAbove(double lo, double hi) { return Number(lo, false, hi); }
CLI::Validator NumberFrom(double lo, double hi) { return Number(lo, true, hi); }

namespace {

template <typename Parse>
CLI::Validator ParsedBy(const char* description, Parse parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          parse(text);
        } catch (const dtr::Error& e) {
          return e.what();
        }
        return "";
      },
      description);
}

}  // namespace

CLI::Validator RatioText() {
  return ParsedBy("", [](const std::string& text) { ParseRatio(text); });
}

CLI::Validator RatioGridText() {
  return ParsedBy("", [](const std::string& text) { ParseRatios(text); });
}

}  // namespace dtr::cli
