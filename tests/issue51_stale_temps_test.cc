// Issue 51, item 11: the hidden temporaries of killed writers
// (model/output_file.h). The comment says what happened before.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/output_file.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

using Folder = ScratchFolder;

// A process id no process has: a child that has exited and been reaped.
pid_t DeadPid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

// Item 11: SIGTERM and Ctrl-C left hidden ".DIR.tmp-*" folders (and
// ".NAME.tmp-*" files) that later runs never removed. The next writer of the
// same name removes those whose process is gone, and keeps those of live
// processes.
TEST_CASE("issue 51: the next writer removes the temporaries of dead processes") {
  Folder dir("dtrcheck_issue51_stale");
  const pid_t dead = DeadPid();
  const fs::path stale_dir = dir.path / (".report.tmp-" + std::to_string(dead) + "-0-abcd");
  const fs::path stale_file = dir.path / (".out.txt.tmp-" + std::to_string(dead) + "-3-beef");
  const fs::path live_dir = dir.path / (".report.tmp-1-0-abcd");  // pid 1 lives
  const fs::path other = dir.path / (".other.tmp-" + std::to_string(dead) + "-0-abcd");
  fs::create_directories(stale_dir / "sub");
  std::ofstream(stale_dir / "report.json") << "{";
  std::ofstream(stale_file) << "half";
  fs::create_directories(live_dir);
  std::ofstream(other) << "another name's";
  {
    PendingDirectory report((dir.path / "report").string());
    report.Write("report.json", "{}\n");
    report.Commit();
  }
  CHECK_FALSE(fs::exists(stale_dir));
  CHECK(fs::exists(live_dir));
  CHECK(fs::exists(stale_file));  // another name's: left to its own writer
  WriteFileAtomically((dir.path / "out.txt").string(), "whole\n");
  CHECK_FALSE(fs::exists(stale_file));
  CHECK(fs::exists(other));
  CHECK(Slurp(dir.path / "out.txt") == "whole\n");
}

}  // namespace
}  // namespace dtr::testing
