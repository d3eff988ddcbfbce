// Golden end-to-end tests stored as data: tests/e2e/<case>.args holds the
// command line ($TRACES is the shared traces folder, $SRC the source tree),
// <case>.out the expected stdout, <case>.err the expected stderr (empty if
// absent) and <case>.code the exit status (0 if absent). In .err and .args
// $SRC and $TRACES stand for the folders; in stdout the source folder is
// replaced by $SRC before the comparison. The golden files are
// written and reviewed by a person; never regenerate them to make a test pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "tests/shell_run.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

std::string Substitute(std::string s) {
  for (auto [key, value] : {std::pair<std::string, std::string>{"$TRACES", TracesDir()}, {"$SRC", DTRCHECK_SOURCE_DIR}}) {
    for (size_t pos; (pos = s.find(key)) != std::string::npos;) s.replace(pos, key.size(), value);
  }
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

TEST_CASE("end-to-end golden cases") {
  std::filesystem::path dir = std::filesystem::path(DTRCHECK_SOURCE_DIR) / "tests" / "e2e";
  std::vector<std::filesystem::path> cases;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".args") cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 5);
  std::filesystem::path err_file = TempPath("dtrcheck_e2e_stderr.txt");
  for (const auto& args_path : cases) {
    std::string name = args_path.stem().string();
    auto sibling = [&](const char* ext) { return dir / (name + ext); };
    // Progress lines carry timings, so none belong in a golden: a case that
    // runs past the plain interval under load would otherwise print one.
    std::string command = "DTRCHECK_PROGRESS_SECONDS=86400 " + std::string(DTRCHECK_BINARY) + " " +
                          Substitute(Slurp(args_path));
    INFO("case ", name, ": ", command);
    ShellOutput run = RunShell(command, err_file);
    int want_code = std::filesystem::exists(sibling(".code")) ? std::stoi(Slurp(sibling(".code"))) : 0;
    std::string want_err = std::filesystem::exists(sibling(".err")) ? Substitute(Slurp(sibling(".err"))) + "\n" : "";
    CHECK(run.status == want_code);
    for (size_t pos; (pos = run.out.find(DTRCHECK_SOURCE_DIR)) != std::string::npos;)
      run.out.replace(pos, std::string(DTRCHECK_SOURCE_DIR).size(), "$SRC");
    CHECK(run.out == Slurp(sibling(".out")));
    CHECK(run.err == want_err);
  }
}

}  // namespace
}  // namespace dtr::testing
