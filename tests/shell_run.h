// A shell command run from a test: its stdout, its stderr (through a file)
// and its exit status.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/test_paths.h"

namespace dtr::testing {

struct ShellOutput {
  int status = -1;  // -1: ended by a signal
  std::string out, err;
};

// `command` run by /bin/sh with stderr sent to `err_file`, which is read back.
inline ShellOutput RunShell(const std::string& command, const std::filesystem::path& err_file) {
  FILE* pipe = popen((command + " 2>" + err_file.string()).c_str(), "r");
  REQUIRE(pipe != nullptr);
  ShellOutput o;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) o.out.append(buf, n);
  const int status = pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = Slurp(err_file);
  return o;
}

}  // namespace dtr::testing
