// Resuming a grid of replays (GridJournal, checker/persist/grid_checkpoint.h): a
// sweep interrupted after some replays and resumed from what it recorded
// returns exactly the runs of an uninterrupted sweep, replaying each missing
// point once; the checkpoint file round-trips every field of a RunResult,
// refuses another grid's file with a one-line reason and drops a torn last
// line.
#include "checker/persist/grid_checkpoint.h"

#include <doctest/doctest.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <set>

#include "checker/engine/heuristic.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/hand_traces.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

// Every budget of Chain4 from OOM (10) to no decision (40), under two heuristics.
std::vector<RunSpec> Chain4Grid() {
  std::vector<RunSpec> specs;
  for (const char* h : {"DTR", "LRU"})
    for (int64_t budget = 10; budget <= 40; budget += 3) {
      RunSpec s;
      s.heuristic = &FindHeuristic(h);
      s.budget = budget;
      specs.push_back(s);
    }
  return specs;
}

// Every field of every run (the farm codec writes them all), overheads to the bit.
void CheckSameRuns(const std::vector<RunRecord>& a, const std::vector<RunRecord>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("run ", i, " at budget ", a[i].result.budget);
    CHECK(a[i].spec.heuristic == b[i].spec.heuristic);
    CHECK(EncodeForFarm(a[i].result) == EncodeForFarm(b[i].result));
    CHECK(std::bit_cast<uint64_t>(a[i].overhead) == std::bit_cast<uint64_t>(b[i].overhead));
  }
}

struct Interrupted {};

// Runs `specs` with `jobs` workers, interrupted after `stop_after` recorded
// replays, then resumed (with `resume_jobs`) from those.
std::vector<RunRecord> InterruptAndResume(const Trace& trace, const Baseline& baseline,
                                          const std::vector<RunSpec>& specs, int jobs, size_t stop_after,
                                          int resume_jobs) {
  GridJournal first;
  first.record = [&](const GridPointResult& p) {
    if (first.finished.size() == stop_after) throw Interrupted{};
    first.finished.push_back(p);
  };
  CHECK_THROWS_AS(RunMany(trace, baseline, specs, jobs, nullptr, &first), Interrupted);
  REQUIRE(first.finished.size() == stop_after);
  GridJournal second;
  second.finished = first.finished;
  std::set<std::pair<std::string, int64_t>> replayed;
  second.record = [&](const GridPointResult& p) {
    CHECK(replayed.emplace(p.heuristic, p.result.budget).second);  // each point once
  };
  size_t last_done = 0, last_total = 0;
  std::vector<RunRecord> resumed = RunMany(
      trace, baseline, specs, resume_jobs,
      [&](size_t done, size_t total) {
        last_done = done;
        last_total = total;
      },
      &second);
  CHECK(replayed.size() + stop_after == specs.size());
  CHECK(last_done == specs.size());
  CHECK(last_total == specs.size());
  return resumed;
}

TEST_CASE("grid resume: an interrupted sweep resumed from its record equals the uninterrupted one") {
  SUBCASE("chain4, two heuristics, every interruption point") {
    Trace trace = Chain4();
    Baseline baseline = ComputeBaseline(trace);
    std::vector<RunSpec> specs = Chain4Grid();
    std::vector<RunRecord> whole = RunMany(trace, baseline, specs, 1);
    REQUIRE(whole.front().result.outcome == Outcome::kOom);
    REQUIRE(whole.front().result.oom.has_value());
    for (size_t stop = 0; stop < specs.size(); ++stop) {
      INFO("stopped after ", stop);
      CheckSameRuns(whole, InterruptAndResume(trace, baseline, specs, 1, stop, 1));
      CheckSameRuns(whole, InterruptAndResume(trace, baseline, specs, 2, stop, 3));
    }
  }
  SUBCASE("unet, DTR over 0.40-0.60, three workers, stopped after 7 replays") {
    Trace trace = LoadTrace(TracePath("unet"));
    Baseline baseline = ComputeBaseline(trace);
    std::vector<RunSpec> specs;
    for (const Ratio& r : ParseRatios("0.40:0.60:0.01")) {
      RunSpec s;
      s.heuristic = &FindHeuristic("DTR");
      s.ratio = r;
      specs.push_back(s);
    }
    CheckSameRuns(RunMany(trace, baseline, specs, 1), InterruptAndResume(trace, baseline, specs, 3, 7, 2));
  }
  SUBCASE("a point the grid repeats is replayed once and recorded once") {
    Trace trace = Chain4();
    Baseline baseline = ComputeBaseline(trace);
    std::vector<RunSpec> specs = Chain4Grid();
    RunSpec again_2 = specs[2], again_5 = specs[5];
    specs.push_back(again_2);
    specs.insert(specs.begin(), again_5);
    GridJournal journal;
    journal.record = [&](const GridPointResult& p) { journal.finished.push_back(p); };
    std::vector<RunRecord> runs = RunMany(trace, baseline, specs, 2, nullptr, &journal);
    CHECK(journal.finished.size() == specs.size() - 2);
    CheckSameRuns(RunMany(trace, baseline, specs, 1), runs);
  }
}

std::filesystem::path FreshTempPath(const char* name) {
  std::filesystem::path p = TempPath(name);
  std::filesystem::remove(p);
  return p;
}

TEST_CASE("grid checkpoint file: round trip, another grid's file, a torn last line, edited lines") {
  Trace trace = Chain4();
  Baseline baseline = ComputeBaseline(trace);
  std::vector<RunSpec> specs = Chain4Grid();
  std::vector<RunRecord> whole = RunMany(trace, baseline, specs, 1);
  GridKey key = GridKeyOf(FingerprintOf(trace, baseline, "sha-of-chain4", "chain4.log"), specs.front(),
                          {"DTR", "LRU"}, "10:40:3");
  nlohmann::ordered_json header = GridHeader("sweep", key);
  std::filesystem::path path = FreshTempPath("dtrcheck_grid_checkpoint_test.jsonl");
  {
    GridCheckpoint fresh(path.string(), header);
    CHECK(fresh.finished().empty());
    for (size_t i = 0; i < 5; ++i) fresh.Append({std::string(specs[i].heuristic->name), whole[i].result});
  }
  {
    GridCheckpoint reopened(path.string(), header);
    REQUIRE(reopened.finished().size() == 5);
    // Every field back, the OOM context of the first run included.
    CHECK(EncodeForFarm(reopened.finished()[0].result) == EncodeForFarm(whole[0].result));
    GridJournal journal = reopened.Journal();
    CheckSameRuns(whole, RunMany(trace, baseline, specs, 2, nullptr, &journal));
  }
  CHECK(GridCheckpoint(path.string(), header).finished().size() == specs.size());

  // Another runtime, grid or command: refused, the file untouched.
  std::string before = Slurp(path);
  GridKey eager = key;
  eager.replay.runtime = "RuntimeV2";
  CHECK_THROWS_WITH_AS(GridCheckpoint(path.string(), GridHeader("sweep", eager)),
                       (path.string() +
                        ": checkpoint of another grid: runtime is \"RuntimeV2\" here, \"RuntimeV2EagerOptimized\" "
                        "in the file")
                           .c_str(),
                       Error);
  GridKey wider = key;
  wider.ratios = "10:43:3";
  CHECK_THROWS_AS(GridCheckpoint(path.string(), GridHeader("sweep", wider)), Error);
  CHECK_THROWS_WITH_AS(GridCheckpoint(path.string(), GridHeader("scan", key)),
                       (path.string() + ": checkpoint of another grid: command is \"scan\" here, \"sweep\" in the file")
                           .c_str(),
                       Error);
  CHECK(Slurp(path) == before);

  // A run killed mid-line: the torn line is cut, the rest kept.
  std::filesystem::resize_file(path, before.size() - 10);
  CHECK(GridCheckpoint(path.string(), header).finished().size() == specs.size() - 1);
  CHECK(Slurp(path).back() == '\n');

  // An edited line and a duplicated one are refused with FILE:LINE.
  std::string text = Slurp(path);
  size_t line3 = text.find('\n', text.find('\n') + 1) + 1;
  std::string edited = text;
  edited.insert(text.find("\"clock\":", line3) + 8, "1");
  std::ofstream(path, std::ios::binary) << edited;
  CHECK_THROWS_WITH_AS(GridCheckpoint(path.string(), header),
                       (path.string() +
                        ":3: the line does not match its checksum (edited after it was written?); delete the "
                        "checkpoint to start over")
                           .c_str(),
                       Error);
  std::string line = text.substr(line3, text.find('\n', line3) + 1 - line3);
  std::ofstream(path, std::ios::binary) << text << line;
  CHECK_THROWS_WITH_AS(GridCheckpoint(path.string(), header),
                       (path.string() + ":" + std::to_string(specs.size() + 1) + ": the point DTR at budget " +
                        std::to_string(whole[1].result.budget) + " is on line 3 already")
                           .c_str(),
                       Error);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace dtr::testing
