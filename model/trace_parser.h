// Reads the DTR execution-log format (docs/trace_format.md) into a Trace,
// following simrd's parse/parse.py: replay starts after the START annotation,
// a CALL is followed by a MEMORY and an ALIAS line per result, MUTATE makes a
// new storage per mutated argument and releases the old tensor, and every
// name still referenced at the end is pinned in order of first appearance.
//
// Every problem is reported as dtr::Error "SOURCE:LINE: message"; nothing is
// returned for a trace with an error.
#pragma once

#include <istream>
#include <string>
#include <string_view>

#include "model/trace.h"

namespace dtr {

Trace ParseTrace(std::istream& in, const std::string& source);
Trace ParseTraceString(std::string_view text, const std::string& source);
Trace LoadTrace(const std::string& path);  // source is the path as given

}  // namespace dtr
