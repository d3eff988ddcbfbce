// The instability subcommands end to end: the binary is run and its JSON read.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "diagnose/decision_log.h"
#include "model/trace_parser.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

struct Output {
  int status = 0;
  std::string text;  // stdout and stderr
};

Output Run(const std::string& args) {
  Output out;
  std::string command = std::string(DTRCHECK_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.text.append(buf, n);
  int status = pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST_CASE("cli: scan --json reports the ResNet-32 inversion with ratios") {
  Output o = Run("scan " + TracePath("resnet32") + " --ratios 0.100:0.108:0.001 --json -j 2");
  REQUIRE(o.status == 0);
  nlohmann::json j = nlohmann::json::parse(o.text);
  CHECK(j["command"] == "scan");
  CHECK(j["points"].size() == 9);
  REQUIRE(j["inversions"].size() == 1);
  CHECK(j["inversions"][0]["feasible_below"].get<double>() == 0.101);
  CHECK(j["inversions"][0]["oom_from"].get<double>() == 0.102);
  CHECK(j["inversions"][0]["oom_to"].get<double>() == 0.106);
  CHECK(j["inversions"][0]["feasible_above"].get<double>() == 0.107);
  CHECK(j["inversions"][0]["lower_edge"].is_null());  // not refined
}

TEST_CASE("cli: replay --record writes a log with one line per decision") {
  std::string path =
      TempPath("dtrcheck_cli_record.jsonl.gz").string();
  Output o = Run("replay " + TracePath("resnet32") + " --ratio 0.102 --json --record " + path);
  REQUIRE(o.status == 0);
  nlohmann::json run = nlohmann::json::parse(o.text);
  DecisionLogFile log = ReadDecisionLog(path, LoadTrace(TracePath("resnet32")));
  std::filesystem::remove(path);
  CHECK(static_cast<int64_t>(log.log.decisions.size()) ==
        run["heuristic_evictions"].get<int64_t>());
  CHECK(static_cast<int64_t>(log.log.eager.size()) == run["eager_evictions"].get<int64_t>());
  CHECK(log.header.budget == run["budget"].get<int64_t>());
  CHECK(log.end->outcome == run["result"].get<std::string>());
}

TEST_CASE("cli: bad flags are one-line errors") {
  Output o = Run("diff " + TracePath("resnet32") + " --ratios 0.1,0.2,0.3");
  CHECK(o.status == 2);
  CHECK(o.text == "dtrcheck: diff needs exactly two ratios, got 3\n");
  o = Run("scan " + TracePath("resnet32") + " --ratios 0.1,0.2 --cliff-factor 1");
  CHECK(o.status == 2);
  CHECK(o.text == "dtrcheck: --cliff-factor: 1 is outside the range (1, inf) (see --help)\n");
}

}  // namespace
}  // namespace dtr::testing
