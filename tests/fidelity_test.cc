// The fidelity suite: every point of every file in shared/reference/ (simrd's
// own outputs) is replayed, and every field must be equal; floats are compared
// bit for bit. The baseline header of each file is checked the same way.
#include <doctest/doctest.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "checker/drivers/sweep.h"
#include "checker/farm/parallel.h"
#include "model/trace_parser.h"
#include "reports/run_report.h"
#include "tests/test_paths.h"

namespace dtr::testing {

std::string TracePath(const std::string& prefix) {
  const std::string missing = MissingSharedDir();
  if (!missing.empty()) FAIL(missing);
  for (const auto& e : std::filesystem::directory_iterator(TracesDir())) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix + "-", 0) == 0) return e.path().string();
  }
  FAIL("no trace for ", prefix, " in ", TracesDir());
  return "";
}

namespace {

using nlohmann::json;

// Compares every key of `want` (but simrd's wall time) with `got`.
void ExpectSameFields(const json& want, const json& got, const std::string& where) {
  for (auto it = want.begin(); it != want.end(); ++it) {
    if (it.key() == "secs") continue;
    INFO(where, " field ", it.key());
    REQUIRE(got.contains(it.key()));
    const json& w = it.value();
    const json& g = got[it.key()];
    if (w.is_object()) {
      ExpectSameFields(w, g, where + "." + it.key());
    } else if (w.is_number_float() || g.is_number_float()) {
      CHECK(std::bit_cast<uint64_t>(w.get<double>()) == std::bit_cast<uint64_t>(g.get<double>()));
    } else {
      CHECK(w == g);
    }
  }
}

TEST_CASE("fidelity: every reference point replays to simrd's numbers") {
  const std::string missing = MissingSharedDir();
  if (!missing.empty()) FAIL(missing);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(ReferenceDir()))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 0);
  std::map<std::string, std::pair<Trace, Baseline>> traces;
  size_t points = 0;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::string line;
    REQUIRE(std::getline(in, line));
    json header = json::parse(line);
    std::string log = header["log"];
    if (!traces.count(log)) {
      Trace t = LoadTrace(TracesDir() + "/" + log);
      Baseline b = ComputeBaseline(t);
      traces.emplace(log, std::make_pair(std::move(t), b));
    }
    const auto& [trace, baseline] = traces.at(log);
    RunSpec spec;
    spec.heuristic = &FindHeuristic(header["heuristic"].get<std::string>());
    spec.runtime = ParseRuntime(header["runtime"].get<std::string>());
    if (header.contains("overhead_limit")) spec.overhead_limit = header["overhead_limit"].get<double>();
    std::vector<json> want;
    std::vector<RunSpec> specs;
    while (std::getline(in, line)) {
      json point = json::parse(line);
      RunSpec s = spec;
      double ratio = point["ratio"].get<double>();
      s.ratio = Ratio{ratio, point["ratio"].dump()};
      specs.push_back(s);
      want.push_back(point);
    }
    // Every point replayed on its own: RunMany would take a point inside an
    // earlier run's budget interval from that run (tests/sweep_test.cc
    // compares that path with replays).
    std::vector<RunRecord> runs = ParallelMap<RunRecord>(
        specs.size(), 0, [&](size_t i) { return RunOne(trace, baseline, specs[i]); });
    TraceSummary summary = Summarize(log, baseline);
    for (size_t i = 0; i < runs.size(); ++i) {
      json got = json::parse(RunJson(summary, runs[i]).dump());
      std::string where = file.filename().string() + " ratio " + want[i]["ratio"].dump();
      ExpectSameFields(header, got, where + " header");
      ExpectSameFields(want[i], got, where);
      CHECK_MESSAGE(want[i].contains("oom") == got.contains("oom"), where, ": OOM context in only one of the two");
      ++points;
    }
  }
  MESSAGE("compared ", points, " reference points in ", files.size(), " files");
  CHECK(points >= 150);
}

}  // namespace
}  // namespace dtr::testing
