// Where tests find the shared traces and reference outputs (read in place),
// and their own files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace dtr::testing {

inline std::string SharedDir() { return DTRCHECK_SHARED_DIR; }
inline std::string TracesDir() { return SharedDir() + "/traces"; }
inline std::string ReferenceDir() { return SharedDir() + "/reference"; }
// Why a test that needs the public traces cannot run, or "" when they are there.
inline std::string MissingSharedDir() {
  if (std::filesystem::is_directory(TracesDir()) && std::filesystem::is_directory(ReferenceDir())) return "";
  return "the public DTR traces are not in " + SharedDir() +
         " (traces/, reference/): they are simrd/logs.zip of the DTR authors' repository uwsampl/dtr-prototype (README.md)";
}
// The trace file whose name starts with `prefix` followed by '-', e.g. "resnet32".
std::string TracePath(const std::string& prefix);
// A path in the temporary folder for `name`, private to this process: ctest
// runs test cases in parallel processes.
inline std::filesystem::path TempPath(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "." + std::to_string(getpid()));
}

// A fresh folder private to this process, removed at the end.
struct ScratchFolder {
  std::filesystem::path path;
  explicit ScratchFolder(const std::string& name) : path(TempPath(name)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
};

// The whole content of a file (empty if it cannot be read).
inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace dtr::testing
