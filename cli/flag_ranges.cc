#include "cli/flag_ranges.h"

#include "checker/drivers/ratio_grid.h"
#include "model/error.h"

namespace dtr::cli {

CLI::Validator InRange(const api::IntegerRange& range) {
  return CLI::Validator([range](std::string& text) { return api::IntegerProblem(range, text); },
                        range.Text());
}

CLI::Validator InRange(const api::NumberRange& range) {
  return CLI::Validator([range](std::string& text) { return api::NumberProblem(range, text); },
                        range.Text());
}

CLI::Validator IntegerIn(int64_t lo, int64_t hi) { return InRange(api::IntegerRange{"", lo, hi}); }

CLI::Validator NumberAbove(double lo, double hi) { return InRange(api::NumberRange{"", lo, false, hi}); }

CLI::Validator NumberFrom(double lo, double hi) { return InRange(api::NumberRange{"", lo, true, hi}); }

CLI::Validator AnyUnsigned64() {
  return CLI::Validator([](std::string& text) { return api::Unsigned64Problem(text); }, "0..2^64-1");
}

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
