#include "checker/drivers/ratio_grid.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "model/echo.h"
#include "model/error.h"

namespace dtr {

namespace {

// A non-negative decimal as digits * 10^-scale.
struct Decimal {
  __int128 digits = 0;
  int scale = 0;
};

Decimal ParseDecimal(std::string_view text, std::string_view whole) {
  Decimal d;
  bool seen_digit = false, seen_point = false;
  for (char c : text) {
    if (c == '.' && !seen_point) {
      seen_point = true;
    } else if (c >= '0' && c <= '9') {
      seen_digit = true;
      if (d.digits > (static_cast<__int128>(1) << 100)) throw Error(fmt::format("ratio '{}' has too many digits", Echo(whole)));
      d.digits = d.digits * 10 + (c - '0');
      if (seen_point) ++d.scale;
    } else {
      throw Error(fmt::format("bad ratio '{}': expected a decimal number like 0.102", Echo(whole)));
    }
  }
  if (!seen_digit) throw Error(fmt::format("bad ratio '{}': expected a decimal number like 0.102", Echo(whole)));
  return d;
}

__int128 Rescale(const Decimal& d, int scale) {
  __int128 v = d.digits;
  for (int i = d.scale; i < scale; ++i) v *= 10;
  return v;
}

std::string Format(__int128 digits, int scale) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(digits % 10)));
    digits /= 10;
  } while (digits > 0);
  if (scale > 0) {
    while (static_cast<int>(s.size()) <= scale) s.insert(s.begin(), '0');
    s.insert(s.end() - scale, '.');
  }
  return s;
}

// `whole` is the text the user gave: the ratio itself, or the grid it is in.
Ratio Make(std::string text, std::string_view whole) {
  double v = std::strtod(text.c_str(), nullptr);
  const std::string what = text == whole ? fmt::format("ratio '{}'", Echo(whole))
                                         : fmt::format("ratio {} of grid '{}'", text, Echo(whole));
  if (!(v > 0)) throw Error(what + " must be greater than 0");
  if (!std::isfinite(v)) throw Error(what + " is not finite");
  return {v, std::move(text)};
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

Ratio ParseRatio(std::string_view text) {
  text = Trim(text);
  if (!text.empty() && text.front() == '-') throw Error(fmt::format("ratio '{}' must be greater than 0", Echo(text)));
  Decimal d = ParseDecimal(text, text);
  return Make(Format(d.digits, d.scale), text);
}

std::vector<Ratio> ParseRatios(std::string_view spec) {
  std::vector<Ratio> out;
  if (Trim(spec).empty()) throw Error("no ratios given");
  if (spec.find(':') != std::string_view::npos) {
    size_t a = spec.find(':'), b = spec.find(':', a + 1);
    if (b == std::string_view::npos || spec.find(':', b + 1) != std::string_view::npos)
      throw Error(fmt::format("bad ratio grid '{}': expected START:STOP:STEP, e.g. 0.085:0.125:0.001", Echo(spec)));
    if (Trim(spec).front() == '-') throw Error(fmt::format("ratio grid '{}' must start above 0", Echo(spec)));
    Decimal lo = ParseDecimal(Trim(spec.substr(0, a)), spec);
    Decimal hi = ParseDecimal(Trim(spec.substr(a + 1, b - a - 1)), spec);
    Decimal step = ParseDecimal(Trim(spec.substr(b + 1)), spec);
    int scale = std::max({lo.scale, hi.scale, step.scale});
    __int128 l = Rescale(lo, scale), h = Rescale(hi, scale), s = Rescale(step, scale);
    if (s <= 0) throw Error(fmt::format("bad ratio grid '{}': STEP must be greater than 0", Echo(spec)));
    if (h < l) throw Error(fmt::format("bad ratio grid '{}': STOP is below START", Echo(spec)));
    if ((h - l) / s > 1000000) throw Error(fmt::format("ratio grid '{}' has more than a million points", Echo(spec)));
    for (__int128 v = l; v <= h; v += s) out.push_back(Make(Format(v, scale), spec));
    return out;
  }
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string_view::npos) comma = spec.size();
    out.push_back(ParseRatio(spec.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  return out;
}

}  // namespace dtr
