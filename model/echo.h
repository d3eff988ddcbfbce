// How a message shows text it did not write: a token of a trace or script, a
// flag's value. Such text can be anything: megabytes long, NUL bytes, terminal
// escapes, invalid UTF-8. An echo keeps a message one readable line:
//  - control characters (bytes 0x00-0x1f and 0x7f) and bytes that are not
//    part of valid UTF-8 are written as \xNN (\n, \r, \t as such); valid
//    UTF-8 and backslashes are kept as they are;
//  - text longer than kEchoBytes bytes is cut at a character boundary and
//    followed by "... (N bytes)", N the length of the whole text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dtr {

inline constexpr size_t kEchoBytes = 64;

// `text` escaped and, if longer than kEchoBytes bytes, cut (see above).
std::string Echo(std::string_view text);

// `text` escaped, never cut: for a whole message about to be printed.
std::string EscapeNonPrintable(std::string_view text);

}  // namespace dtr
