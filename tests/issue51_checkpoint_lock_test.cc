// Issue 51, item 4: one checkpoint file, one writer (checker/persist/checkpoint_journal.h
// holds a lock on it, model/file_lock.h). The comment of each case says what
// happened before.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "checker/persist/checkpoint_journal.h"
#include "model/error.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

using Folder = ScratchFolder;

nlohmann::ordered_json TestHeader() {
  TraceFingerprint f;
  f.sha256 = "00";
  f.log = "t.log";
  return CheckpointHeader("sweep", f);
}

// Item 4: two runs on one --checkpoint FILE both went on, interleaving their
// lines (sweep) or writing overlapping intervals (atlas), and a rerun failed
// on the corrupt file. The second writer is refused at once, naming the file
// and the process that holds it; once the first is gone, the file opens.
TEST_CASE("issue 51: a second writer of one checkpoint is refused at once") {
  Folder dir("dtrcheck_issue51_ckpt");
  const std::string path = (dir.path / "x.ckpt").string();
  {
    CheckpointJournal first(path, TestHeader(), "grid");
    first.Append({{"n", 1}});
    try {
      CheckpointJournal second(path, TestHeader(), "grid");
      FAIL("a second writer of the checkpoint was accepted");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInput);
      CHECK(std::string(e.what()) ==
            path + ": in use by another dtrcheck run (pid " + std::to_string(getpid()) + ")");
    }
    first.Append({{"n", 2}});
  }
  CheckpointJournal again(path, TestHeader(), "grid");
  CHECK(again.entries().size() == 2);
}

// A writer killed by SIGKILL never blocks the next one: the kernel drops its
// lock with the process.
TEST_CASE("issue 51: the checkpoint lock of a killed run does not block the next one") {
  Folder dir("dtrcheck_issue51_ckpt_killed");
  const std::string path = (dir.path / "x.ckpt").string();
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t child = fork();
  if (child == 0) {
    CheckpointJournal held(path, TestHeader(), "grid");
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  REQUIRE(child > 0);
  char c;
  REQUIRE(read(ready[0], &c, 1) == 1);
  CHECK_THROWS_WITH_AS(CheckpointJournal(path, TestHeader(), "grid"),
                       (path + ": in use by another dtrcheck run (pid " + std::to_string(child) + ")").c_str(),
                       InputError);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  CheckpointJournal after(path, TestHeader(), "grid");
  CHECK(after.entries().empty());
}

}  // namespace
}  // namespace dtr::testing
