// Output files appear whole or not at all (model/output_file.h): a file is
// renamed into place only once complete, an abandoned or failed write leaves
// neither the file nor a temporary behind, and a directory of files is
// published as a set, replacing an earlier set as a whole or not at all.
#include "model/output_file.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/error.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

// The names in `dir`, sorted.
std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

fs::path FreshDir(const char* name) {
  fs::path dir = TempPath(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST_CASE("WriteFileAtomically replaces a file whole and leaves no temporary") {
  fs::path dir = FreshDir("dtrcheck_output_file_test");
  fs::path file = dir / "out.txt";
  WriteFileAtomically(file.string(), "first\n");
  CHECK(Slurp(file) == "first\n");
  WriteFileAtomically(file.string(), "second, longer\n");
  CHECK(Slurp(file) == "second, longer\n");
  CHECK(Listing(dir) == std::vector<std::string>{"out.txt"});
  fs::remove_all(dir);
}

TEST_CASE("PendingFile shows nothing under the final name until Commit, and cleans up when abandoned") {
  fs::path dir = FreshDir("dtrcheck_pending_file_test");
  fs::path file = dir / "log.gz";
  {
    PendingFile pending(file.string());
    std::ofstream(pending.temp_path()) << "half";
    CHECK_FALSE(fs::exists(file));
    CHECK(fs::path(pending.temp_path()).parent_path() == dir);  // same directory: rename is atomic
  }  // abandoned, as when the run throws
  CHECK(Listing(dir).empty());
  {
    PendingFile pending(file.string());
    std::ofstream(pending.temp_path()) << "whole";
    pending.Commit();
  }
  CHECK(Slurp(file) == "whole");
  CHECK(Listing(dir) == std::vector<std::string>{"log.gz"});
  fs::remove_all(dir);
}

TEST_CASE("A file that cannot be written names the path and the reason, and leaves nothing") {
  fs::path dir = FreshDir("dtrcheck_output_file_fail_test");
  std::ofstream(dir / "plain") << "x";
  std::string bad = (dir / "plain" / "out.txt").string();
  CHECK_THROWS_WITH_AS(WriteFileAtomically(bad, "text"), (bad + ": cannot write (Not a directory)").c_str(), Error);
  CHECK(Listing(dir) == std::vector<std::string>{"plain"});
  CHECK(Slurp(dir / "plain") == "x");
  fs::remove_all(dir);
}

TEST_CASE("PendingDirectory publishes a set of files together") {
  fs::path root = FreshDir("dtrcheck_pending_dir_test");
  fs::path out = root / "sub" / "report";

  SUBCASE("a new directory appears only on Commit") {
    PendingDirectory set(out.string());
    CHECK(set.Write("a.txt", "A1") == (out / "a.txt").string());
    set.Write("b.txt", "B1");
    CHECK_FALSE(fs::exists(out));
    set.Commit();
    CHECK(Listing(out) == std::vector<std::string>{"a.txt", "b.txt"});
    CHECK(Listing(root / "sub") == std::vector<std::string>{"report"});
  }

  SUBCASE("an earlier set is replaced as a whole, even by a smaller set") {
    {
      PendingDirectory set(out.string());
      set.Write("a.txt", "A1");
      set.Write("b.txt", "B1");
      set.Commit();
    }
    PendingDirectory set(out.string() + "/");  // a trailing slash names the same directory
    set.Write("a.txt", "A2");
    set.Write("b.txt", "B2");
    set.Write("c.txt", "C2");
    CHECK(Slurp(out / "a.txt") == "A1");  // untouched until Commit
    set.Commit();
    CHECK(Slurp(out / "a.txt") == "A2");
    CHECK(Slurp(out / "c.txt") == "C2");
    CHECK(Listing(root / "sub") == std::vector<std::string>{"report"});  // the old set is gone
  }

  SUBCASE("an abandoned set leaves the old directory untouched and no temporary") {
    {
      PendingDirectory set(out.string());
      set.Write("a.txt", "A1");
      set.Commit();
    }
    {
      PendingDirectory set(out.string());
      set.Write("a.txt", "A2");
      CHECK_THROWS_AS(set.Write("../escape", "x"), Error);  // a failure midway through the set
    }
    CHECK(Listing(out) == std::vector<std::string>{"a.txt"});
    CHECK(Slurp(out / "a.txt") == "A1");
    CHECK(Listing(root / "sub") == std::vector<std::string>{"report"});
  }

  SUBCASE("a directory holding files the set would not replace is refused and left as it was") {
    fs::create_directories(out);
    std::ofstream(out / "notes.txt") << "mine";
    PendingDirectory set(out.string());
    set.Write("a.txt", "A1");
    CHECK_THROWS_WITH_AS(set.Commit(),
                         (out.string() +
                          ": holds 'notes.txt', which the new files would not replace; give a new or empty directory, "
                          "or one holding only an earlier version of them")
                             .c_str(),
                         Error);
    CHECK(Listing(out) == std::vector<std::string>{"notes.txt"});
  }

  SUBCASE("a directory where one of the set's files should go is refused, not replaced") {
    fs::create_directories(out / "a.txt");
    std::ofstream(out / "a.txt" / "keep") << "mine";
    PendingDirectory set(out.string());
    set.Write("a.txt", "A1");
    CHECK_THROWS_WITH_AS(set.Commit(), ((out / "a.txt").string() + ": cannot open for writing (Is a directory)").c_str(),
                         Error);
    CHECK(Slurp(out / "a.txt" / "keep") == "mine");
  }

  SUBCASE("an empty existing directory is filled") {
    fs::create_directories(out);
    PendingDirectory set(out.string());
    set.Write("a.txt", "A1");
    set.Commit();
    CHECK(Listing(out) == std::vector<std::string>{"a.txt"});
  }

  SUBCASE("a file where the directory should be is refused") {
    fs::create_directories(out.parent_path());
    std::ofstream(out) << "x";
    CHECK_THROWS_AS(PendingDirectory(out.string()), Error);
    CHECK(Slurp(out) == "x");
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace dtr::testing
