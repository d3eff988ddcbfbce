#include "model/echo.h"

#include <fmt/core.h>

namespace dtr {

namespace {

// The length of the valid UTF-8 sequence of 2 to 4 bytes at text[i], or 0.
size_t Utf8Sequence(std::string_view text, size_t i) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  size_t n = c >= 0xc2 && c <= 0xdf   ? 2
             : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4
                                      : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  unsigned char c1 = static_cast<unsigned char>(text[i + 1]);
  if (c == 0xe0 && c1 < 0xa0) return 0;  // overlong
  if (c == 0xed && c1 > 0x9f) return 0;  // surrogates
  if (c == 0xf0 && c1 < 0x90) return 0;  // overlong
  if (c == 0xf4 && c1 > 0x8f) return 0;  // above U+10FFFF
  return n;
}

// Appends text[from, to) escaped to `out`; returns where it stopped (a
// character boundary at or before `to`, so a sequence is never split).
size_t AppendEscaped(std::string_view text, size_t from, size_t to, std::string& out) {
  size_t i = from;
  while (i < to) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (size_t n = c >= 0x80 ? Utf8Sequence(text, i) : 0; n > 0) {
      if (i + n > to) break;
      out.append(text.substr(i, n));
      i += n;
    } else {
      if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\t')
        out += "\\t";
      else
        out += fmt::format("\\x{:02x}", c);
      ++i;
    }
  }
  return i;
}

}  // namespace

std::string Echo(std::string_view text) {
  std::string out;
  if (text.size() <= kEchoBytes) {
    AppendEscaped(text, 0, text.size(), out);
    return out;
  }
  AppendEscaped(text, 0, kEchoBytes, out);
  out += fmt::format("... ({} bytes)", text.size());
  return out;
}

std::string EscapeNonPrintable(std::string_view text) {
  std::string out;
  AppendEscaped(text, 0, text.size(), out);
  return out;
}

}  // namespace dtr
