// Every printed number is the same for any number of workers: the commands
// that spread replays over threads (atlas, scan, sweep, bounds, report) are
// run with -j 1 and -j 2 and their outputs compared byte for byte, a capped
// atlas included (the cap counts intervals in budget order, not replays in
// the order threads finish them). Each -j 2 run is repeated, so that thread
// timing gets more than one chance to show.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/shell_run.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

namespace fs = std::filesystem;

// stdout of `dtrcheck ARGS`; REQUIREs exit status 0.
std::string Run(const std::string& args) {
  std::string command = std::string(DTRCHECK_BINARY) + " " + args;
  INFO(command);
  ShellOutput o = RunShell(command, "/dev/null");
  REQUIRE(o.status == 0);
  return o.out;
}

void CheckSameForAnyJobs(const std::string& args) {
  INFO("dtrcheck ", args);
  std::string one = Run(args + " -j 1");
  CHECK(!one.empty());
  for (int repeat = 0; repeat < 2; ++repeat) CHECK(Run(args + " -j 2") == one);
}

std::string Unet() { return TracePath("unet"); }
std::string Resnet() { return TracePath("resnet32"); }

TEST_CASE("atlas text, JSON and CSV are the same with -j 1 and -j 2") {
  for (const char* format : {"", " --json", " --csv"})
    CheckSameForAnyJobs("atlas " + Unet() + " --budgets 3525000000:3536000000" + format);
  // 65 intervals in about 1,000 bytes: many parts, many seams.
  CheckSameForAnyJobs("atlas " + Resnet() + " --ratios 0.10184:0.10185 --json");
}

TEST_CASE("scan, sweep and bounds are the same with -j 1 and -j 2") {
  CheckSameForAnyJobs("scan " + Unet() + " --ratios 0.3:0.6:0.05 --refine --json");
  CheckSameForAnyJobs("scan " + Unet() + " --ratios 0.40:0.42:0.01 --exact");
  CheckSameForAnyJobs("sweep " + Unet() + " --ratios 0.2:0.5:0.05 --heuristic DTR,LRU");
  // A real trace on a small grid: no walk-down, Z3 windows or plan search (the
  // demo case below has them).
  CheckSameForAnyJobs("bounds " + Resnet() +
                      " --ratios 0.08:0.12:0.01 --search-seconds 0 --windows 0 --plan-seconds 0 --json");
}

// bounds with its default walk-down, checkpoint plans, cut and Z3 windows
// stops on counts, not clocks: the same JSON with -j 1 and -j 2, and run to
// run. Z3 calls get an explicit work limit, small enough for a fast test,
// so the case holds whatever the default limits of Z3 are.
TEST_CASE("bounds with the default walk-down is the same with -j 1 and -j 2") {
  ScratchFolder dir("dtrcheck_bounds_determinism_test");
  const std::string demo = (dir.path / "demo.log").string();
  Run("gen demo -o " + demo);
  // Most of each run is the walk-down's Z3 encodings, a second each. The
  // demo's checkpoint plans are below DTR's best run, which skips the walk:
  // without them, it runs.
  const std::string args = "bounds " + demo + " --work-limit 100000 --json";
  const std::string walk = Run(args + " --plan-seconds 0 -j 1");
  CHECK(Run(args + " --plan-seconds 0 -j 2") == walk);
  // The walk-down ran, and no timer stopped it.
  CHECK(walk.find("\"walk\":{\"mode\":\"gallop\",\"timed_out\":false") != std::string::npos);
  CHECK(walk.find("\"skipped\":false") != std::string::npos);
  CHECK(walk.find("\"steps\":[]") == std::string::npos);
  const std::string plans = Run(args + " -j 1");
  CHECK(Run(args + " -j 2") == plans);
  CHECK(plans.find("\"skipped\":true,\"steps\":[]") != std::string::npos);
}

TEST_CASE("report.json is the same with -j 1 and -j 2, with and without an atlas cap") {
  fs::path root = TempPath("dtrcheck_determinism_test");
  fs::remove_all(root);
  // The demo's atlas has 27 intervals: caps below, at and above that.
  for (const char* cap : {"5", "26", "27", "28", "2000"}) {
    INFO("--atlas-max-runs ", cap);
    std::string json;
    for (const char* jobs : {"1", "2", "2"}) {
      // One folder for all three: the report's commands name the demo trace in it.
      fs::path dir = root / cap;
      fs::remove_all(dir);
      Run(std::string("report --atlas-max-runs ") + cap + " -j " + jobs + " --out " + dir.string());
      std::string got = Slurp(dir / "report.json");
      REQUIRE(!got.empty());
      if (json.empty())
        json = got;
      else
        CHECK(got == json);
    }
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace dtr::testing
