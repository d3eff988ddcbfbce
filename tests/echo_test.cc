// model/echo.h: how messages repeat text from the input.
#include "model/echo.h"

#include <doctest/doctest.h>

#include <string>

namespace dtr::testing {
namespace {

using namespace std::string_literals;

TEST_CASE("echo: printable text and valid UTF-8 are kept as they are") {
  CHECK(Echo("x8205") == "x8205");
  CHECK(Echo("a\\b 'c'") == "a\\b 'c'");
  CHECK(Echo("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");
  CHECK(Echo("") == "");
}

// Regression: a NUL byte in a bad script ended the error message early, and a
// terminal escape was echoed raw.
TEST_CASE("echo: control characters and bytes that are not UTF-8 are escaped") {
  CHECK(Echo("x\0y"s) == "x\\x00y");
  CHECK(Echo("\x1b[31mred") == "\\x1b[31mred");
  CHECK(Echo("a\nb\tc\r") == "a\\nb\\tc\\r");
  CHECK(Echo("\x7f") == "\\x7f");
  CHECK(Echo("\xff\xfe") == "\\xff\\xfe");
  CHECK(Echo("\xc3") == "\\xc3");                    // a sequence cut short
  CHECK(Echo("\xc0\xaf") == "\\xc0\\xaf");           // overlong
  CHECK(Echo("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(EscapeNonPrintable("one\0two"s) == "one\\x00two");
}

// Regression: an error naming a 100 MB token printed all 100 MB.
TEST_CASE("echo: long text is cut to kEchoBytes with its length") {
  std::string big(100'000'000, 'a');
  std::string e = Echo(big);
  CHECK(e == std::string(kEchoBytes, 'a') + "... (100000000 bytes)");
  CHECK(Echo(std::string(kEchoBytes, 'b')) == std::string(kEchoBytes, 'b'));
  // Never inside a UTF-8 sequence: the euro sign straddling the cut is dropped whole.
  std::string text = std::string(kEchoBytes - 1, 'c') + "\xe2\x82\xac" + "tail";
  CHECK(Echo(text) ==
        std::string(kEchoBytes - 1, 'c') + "... (" + std::to_string(text.size()) + " bytes)");
  // EscapeNonPrintable never cuts.
  CHECK(EscapeNonPrintable(big).size() == big.size());
}

}  // namespace
}  // namespace dtr::testing
