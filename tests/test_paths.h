// Where tests find the shared traces and reference outputs (read in place).
#pragma once

#include <string>

namespace dtr::testing {

inline std::string SharedDir() { return DTRCHECK_SHARED_DIR; }
inline std::string TracesDir() { return SharedDir() + "/traces"; }
inline std::string ReferenceDir() { return SharedDir() + "/reference"; }
// The trace file whose name starts with `prefix` followed by '-', e.g. "resnet32".
std::string TracePath(const std::string& prefix);

}  // namespace dtr::testing
