// Where tests find the shared traces and reference outputs (read in place).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace dtr::testing {

inline std::string SharedDir() { return DTRCHECK_SHARED_DIR; }
inline std::string TracesDir() { return SharedDir() + "/traces"; }
inline std::string ReferenceDir() { return SharedDir() + "/reference"; }
// The trace file whose name starts with `prefix` followed by '-', e.g. "resnet32".
std::string TracePath(const std::string& prefix);
// A path in the temporary folder for `name`, private to this process: ctest
// runs test cases in parallel processes.
inline std::filesystem::path TempPath(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "." + std::to_string(getpid()));
}

}  // namespace dtr::testing
