// The error a trace text gets from the parser, for tests of its messages.
#pragma once

#include <string>

#include "model/error.h"
#include "model/trace_parser.h"

namespace dtr::testing {

// The message ParseTraceString throws for `text` read as "t.log", or
// "(no error)" when the text parses.
inline std::string ParseErrorOf(const std::string& text) {
  try {
    ParseTraceString(text, "t.log");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace dtr::testing
