// The decision log: what the recorder sees on hand traces, the file round
// trip, the reader's errors, and scores recomputed from their terms.
#include "diagnose/decision_log.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "checker/drivers/sweep.h"
#include "diagnose/score_terms.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/hand_traces.h"
#include "tests/test_paths.h"
#include "tests/test_runs.h"

namespace dtr::testing {
namespace {

std::string TestFile(const std::string& name) { return TempPath("dtrcheck_test_" + name).string(); }

DecisionLog Record(const Trace& trace, int64_t budget, RunResult* result = nullptr) {
  Baseline baseline = ComputeBaseline(trace);
  ReplayConfig c = ConfigFor(SpecAtBudget(budget), baseline);
  DecisionRecorder rec;
  c.observer = &rec;
  RunResult r = Replay(trace, c);
  if (result) *result = r;
  return rec.log();
}

TEST_CASE("decision log: chain4 at budget 30 has the one decision worked out by hand") {
  Trace trace = Chain4();
  RunResult run;
  DecisionLog log = Record(trace, 30, &run);
  CHECK(run.outcome == Outcome::kPass);
  REQUIRE(log.decisions.size() == 1);
  const DecisionPoint& d = log.decisions[0];
  CHECK(d.index == 0);
  CHECK(d.event == 3);
  CHECK(d.clock == 4);
  CHECK(d.program_step == 3);
  CHECK(d.remat_depth == 0);
  CHECK(trace.tensors[d.tensor].name == "x4");
  CHECK(d.request == 10);
  CHECK(d.memory_usage == 30);
  CHECK(d.pool_size == 2);
  CHECK(d.chosen == StorageOf(trace, "x1"));
  CHECK(d.score == 0.05);
  CHECK(d.terms.cost == 1);
  CHECK(d.terms.size == 10);
  CHECK(d.terms.staleness == 2);
  CHECK(d.runner_up == StorageOf(trace, "x2"));
  CHECK(d.runner_up_score == 0.1);
  CHECK(d.runner_up_terms.staleness == 1);
  CHECK_FALSE(d.overridden);
  // Releases evict x2, x3, x4 eagerly, after the decision.
  REQUIRE(log.eager.size() == 3);
  const char* names[] = {"x2", "x3", "x4"};
  for (int i = 0; i < 3; ++i) {
    CHECK(log.eager[i].eviction.storage == StorageOf(trace, names[i]));
    CHECK(log.eager[i].eviction.program_step == 5 + i);
    CHECK(log.eager[i].decisions_before == 1);
  }
}

TEST_CASE("decision log: chain4 at budgets 40, 20 and 15") {
  Trace trace = Chain4();
  RunResult run;
  CHECK(Record(trace, 40, &run).decisions.empty());
  CHECK(run.outcome == Outcome::kPass);
  DecisionLog two = Record(trace, 20, &run);
  REQUIRE(two.decisions.size() == 2);
  CHECK(two.decisions[0].event == 2);
  CHECK(two.decisions[0].chosen == StorageOf(trace, "x1"));
  CHECK(two.decisions[0].runner_up == -1);  // alone in the pool
  CHECK(two.decisions[1].event == 3);
  CHECK(two.decisions[1].chosen == StorageOf(trace, "x2"));
  CHECK(Record(trace, 15, &run).decisions.empty());
  CHECK(run.outcome == Outcome::kOom);
  CHECK(run.events == 1);
}

TEST_CASE("decision log: a file round trip gives back every field") {
  Trace trace = Remat4();
  Baseline baseline = ComputeBaseline(trace);
  std::string path = TestFile("remat4.jsonl.gz");
  RunRecord run = RunAndRecord(trace, baseline, SpecAtBudget(28), path, "remat4.log");
  DecisionLog direct = Record(trace, 28);
  DecisionLogFile file = ReadDecisionLog(path, trace);
  std::filesystem::remove(path);
  CHECK(file.header.trace == "remat4.log");
  CHECK(file.header.heuristic == "DTR");
  CHECK(file.header.budget == 28);
  CHECK_FALSE(file.header.ratio.has_value());
  CHECK(file.header.baseline_compute == 4);
  REQUIRE(file.end.has_value());
  CHECK(file.end->outcome == "pass");
  CHECK(file.end->clock == run.result.clock);
  CHECK(file.end->overhead == 1.5);
  REQUIRE(file.log.decisions.size() == 2);  // x1 at event 2; x2 at event 3 to rematerialize x1
  REQUIRE(direct.decisions.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const DecisionPoint &a = direct.decisions[i], &b = file.log.decisions[i];
    CHECK(a.index == b.index);
    CHECK(a.event == b.event);
    CHECK(a.clock == b.clock);
    CHECK(a.program_step == b.program_step);
    CHECK(a.remat_depth == b.remat_depth);
    CHECK(a.tensor == b.tensor);
    CHECK(a.request == b.request);
    CHECK(a.memory_usage == b.memory_usage);
    CHECK(a.pool_size == b.pool_size);
    CHECK(a.chosen == b.chosen);
    CHECK(a.score == b.score);
    CHECK(a.terms.cost == b.terms.cost);
    CHECK(a.terms.staleness == b.terms.staleness);
    CHECK(a.runner_up == b.runner_up);
  }
  CHECK(file.log.decisions[1].remat_depth == 1);
  CHECK(trace.tensors[file.log.decisions[1].tensor].name == "x1");
  REQUIRE(file.log.eager.size() == direct.eager.size());
  for (size_t i = 0; i < direct.eager.size(); ++i) {
    CHECK(file.log.eager[i].eviction.storage == direct.eager[i].eviction.storage);
    CHECK(file.log.eager[i].decisions_before == direct.eager[i].decisions_before);
  }
}

TEST_CASE("decision log: the reader names the line of a bad record") {
  Trace trace = Chain4();
  std::string path = TestFile("bad.jsonl");
  {
    std::ofstream out(path);
    out << R"({"format":"dtrcheck-decision-log","version":1,"trace":"chain4.log","heuristic":"DTR",)"
        << R"("runtime":"RuntimeV2EagerOptimized","budget":30,"ratio":null,"baseline_compute":4})"
        << "\n";
    out << R"({"kind":"eager","storage":"x9","event":0,"clock":1,"step":0})"
        << "\n";
  }
  CHECK_THROWS_WITH_AS(ReadDecisionLog(path, trace),
                       (path + ":2: the trace has no tensor 'x9'").c_str(), Error);
  {
    std::ofstream out(path);
    out << R"({"hello":1})"
        << "\n";
  }
  CHECK_THROWS_WITH_AS(ReadDecisionLog(path, trace),
                       (path + ":1: not a dtrcheck decision log").c_str(), Error);
  std::filesystem::remove(path);
}

TEST_CASE("decision log: a ResNet-32 log is gzip'd, and every score equals its terms' quotient") {
  const auto [trace, baseline] = LoadWithBaseline("resnet32");
  RunSpec spec = SpecAtRatio("0.102");
  std::string path = TestFile("resnet32.jsonl.gz");
  RunRecord run = RunAndRecord(trace, baseline, spec, path, "resnet32.log");
  {
    std::ifstream in(path, std::ios::binary);
    unsigned char magic[2] = {0, 0};
    in.read(reinterpret_cast<char*>(magic), 2);
    CHECK(magic[0] == 0x1f);  // gzip
    CHECK(magic[1] == 0x8b);
  }
  DecisionLogFile file = ReadDecisionLog(path, trace);
  std::filesystem::remove(path);
  CHECK(file.header.ratio == std::optional<std::string>("0.102"));
  CHECK(static_cast<int64_t>(file.log.decisions.size()) == run.result.heuristic_evictions);
  CHECK(static_cast<int64_t>(file.log.eager.size()) == run.result.eager_evictions);
  CHECK(file.end->outcome == "oom");
  const HeuristicSpec& dtr = FindHeuristic("DTR");
  for (const DecisionPoint& d : file.log.decisions) {
    CHECK(ScoreFromTerms(dtr, d.terms) == d.score);
    if (d.runner_up >= 0) {
      CHECK(ScoreFromTerms(dtr, d.runner_up_terms) == d.runner_up_score);
      CHECK(d.score <= d.runner_up_score);
    }
  }
}

TEST_CASE("decision log: the writer's lines are the JSON objects' text") {
  LoadedTrace resnet = LoadWithBaseline("resnet32");
  Trace& trace = resnet.trace;
  std::string line;
  size_t compared = 0, with_runner_up = 0;
  auto compare = [&](const DecisionPoint& d) {
    line.clear();
    AppendDecisionPointLine(line, trace, d);
    REQUIRE(line == DecisionPointJson(trace, d).dump());
    ++compared;
  };
  for (const char* heuristic : {"DTR", "LRU", "MSPS", "RandomStorage"}) {
    ReplayConfig c = resnet.ConfigAt("0.102", heuristic);
    DecisionRecorder rec;
    c.observer = &rec;
    Replay(trace, c);
    for (const DecisionPoint& d : rec.log().decisions) {
      INFO(heuristic << " decision " << d.index);
      compare(d);
      with_runner_up += d.runner_up >= 0;
    }
  }
  CHECK(compared > 1000);
  CHECK(with_runner_up > 1000);
  // What runs rarely give: infinities, NaN, no runner-up, an override, and
  // names JSON escapes (quote, backslash, control character, UTF-8).
  DecisionPoint d;
  d.tensor = 0;
  d.chosen = 0;
  d.runner_up = 1;
  trace.tensors[0].name = "a\"b\\c\x01d\u00e9\te";
  trace.tensors[trace.storages[1].root].name = "\u6f22\"";
  const double inf = std::numeric_limits<double>::infinity();
  for (double score : {inf, -inf, 0.0, -0.0, 1e-300, 1.5e22, 123456789.0, std::nan("")})
    for (double runner_up : {inf, -inf, 0.25, 1e16, 3e-5}) {
      d.score = score;
      d.runner_up_score = runner_up;
      d.terms = {-1, 1LL << 62, kNeverAccessed};
      compare(d);
      d.overridden = !d.overridden;
    }
  d.runner_up = -1;
  compare(d);
}

TEST_CASE("scores from terms: infinities and heuristics without some factors") {
  const HeuristicSpec& dtr = FindHeuristic("DTR");
  CHECK(ScoreFromTerms(dtr, {3, 4, 5}) == 3.0 / 20.0);
  CHECK(ScoreFromTerms(dtr, {3, 4, -1}) == 0.0);      // never accessed: staleness inf
  CHECK(std::isinf(ScoreFromTerms(dtr, {3, 0, 5})));  // size 0
  CHECK(ScoreFromTerms(FindHeuristic("AbESize"), {3, 4, 5}) == 0.75);  // no staleness
  CHECK(ScoreFromTerms(FindHeuristic("AbE"), {3, 4, 5}) == 3.0);
  CHECK(ScoreFromTerms(FindHeuristic("AbStale"), {1, 4, 5}) == 0.2);
}

}  // namespace
}  // namespace dtr::testing
