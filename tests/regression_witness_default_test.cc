// Regression: `explain --heuristic H` for H other than DTR tried only H's
// own runs as witnesses, though --witness-heuristics says its default is
// DTR. On a captured torchvision resnet18 at ratio 0.6, LargestStorage runs
// out of memory while DTR passes from 0.56, and explain said "undetermined"
// after 36 failed attempts. The default now stands beside the heuristic
// explained: here DTR's own run at the budget is the certificate.
#include <doctest/doctest.h>

#include <string>

#include "tests/shell_run.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

TEST_CASE("regression: explain of another heuristic tries DTR's runs as witnesses by default") {
  ScratchFolder dir("dtrcheck_witness_default");
  const std::string cd = "cd " + dir.path.string() + " && " + DTRCHECK_BINARY;
  REQUIRE(RunShell(cd + " gen demo -o demo.log", dir.path / ".err").status == 0);
  ShellOutput o = RunShell(cd + " explain demo.log --ratio 0.7 --heuristic LargestStorage --no-z3 --verbose",
                           dir.path / ".err");
  REQUIRE(o.status == 0);
  CHECK(o.out.find("    run: LargestStorage at budget 8074037 -> oom\n"
                   "    run: DTR at budget 8074037 passes with peak 7864320 -> checker: pass") != std::string::npos);
  CHECK(o.out.find("verdict: policy-induced\n") != std::string::npos);
  // Named witness heuristics replace the default, as before.
  ShellOutput lru = RunShell(cd + " explain demo.log --ratio 0.7 --heuristic LargestStorage --no-z3 --verbose "
                                  "--witness-heuristics LRU",
                             dir.path / ".err");
  REQUIRE(lru.status == 0);
  CHECK(lru.out.find("run: DTR at budget") == std::string::npos);
}

}  // namespace
}  // namespace dtr::testing
