// Resuming an atlas walk (AtlasJournal, checker/persist/atlas_checkpoint.h): a walk
// cut off after some intervals and resumed from what it recorded ends with
// exactly the atlas of an uninterrupted walk, whatever the number of workers;
// the checkpoint file round-trips intervals bit for bit, refuses another
// walk's file with a one-line reason and drops a torn last line.
#include "checker/persist/atlas_checkpoint.h"

#include <doctest/doctest.h>

#include <bit>
#include <filesystem>
#include <fstream>

#include "checker/engine/heuristic.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "tests/hand_traces.h"
#include "tests/test_paths.h"

namespace dtr::testing {
namespace {

RunSpec DtrSpec() {
  RunSpec spec;
  spec.heuristic = &FindHeuristic("DTR");
  return spec;
}

// Every field of every interval, overheads to the bit.
void CheckSameAtlas(const BudgetAtlas& a, const BudgetAtlas& b) {
  REQUIRE(a.intervals.size() == b.intervals.size());
  for (size_t i = 0; i < a.intervals.size(); ++i) {
    const AtlasInterval &x = a.intervals[i], &y = b.intervals[i];
    INFO("interval ", i, " [", x.lo, ", ", x.hi, "]");
    CHECK(x.lo == y.lo);
    CHECK(x.hi == y.hi);
    CHECK(x.run_lo == y.run_lo);
    CHECK(x.run_hi == y.run_hi);
    CHECK(x.behaviour == y.behaviour);
    CHECK(std::bit_cast<uint64_t>(x.overhead) == std::bit_cast<uint64_t>(y.overhead));
    CHECK(std::bit_cast<uint64_t>(x.evictions_per_evicted) ==
          std::bit_cast<uint64_t>(y.evictions_per_evicted));
    CHECK(x.remat_compute == y.remat_compute);
    CHECK(x.heuristic_evals == y.heuristic_evals);
    CHECK(x.distinct_heuristic_evicted == y.distinct_heuristic_evicted);
  }
  CHECK(a.summary.holes.size() == b.summary.holes.size());
  CHECK(a.summary.bands.size() == b.summary.bands.size());
}

struct Interrupted {};

// Walks [lo, hi] with `jobs` workers, interrupted after `stop_after`
// recorded intervals, then resumed (with `resume_jobs`) from those.
BudgetAtlas InterruptAndResume(const Trace& trace, const Baseline& baseline, int64_t lo, int64_t hi,
                               int jobs, size_t stop_after, int resume_jobs) {
  AtlasJournal first;
  first.record = [&](const AtlasInterval& iv) {
    if (first.finished.size() == stop_after) throw Interrupted{};
    first.finished.push_back(iv);
  };
  CHECK_THROWS_AS(BuildAtlas(trace, baseline, DtrSpec(), lo, hi, jobs, nullptr, {}, &first),
                  Interrupted);
  REQUIRE(first.finished.size() == stop_after);
  AtlasJournal second;
  second.finished = first.finished;
  size_t recorded = 0;
  second.record = [&](const AtlasInterval&) { ++recorded; };
  BudgetAtlas resumed =
      BuildAtlas(trace, baseline, DtrSpec(), lo, hi, resume_jobs, nullptr, {}, &second);
  CHECK(resumed.resumed == stop_after);
  // runs counts the replays of one worker walking up from lo, whoever did them.
  CHECK(resumed.runs == resumed.intervals.size());
  if (jobs == 1 && resume_jobs == 1)
    CHECK(recorded + stop_after == resumed.runs);  // exactly the budgets not walked yet
  else
    CHECK(recorded + stop_after >= resumed.runs);  // parallel parts replay runs that cross their seams
  return resumed;
}

TEST_CASE(
    "atlas resume: an interrupted walk resumed from its record equals the uninterrupted one") {
  SUBCASE("inversion5, every interruption point") {
    Trace trace = Inversion5();
    Baseline baseline = ComputeBaseline(trace);
    BudgetAtlas whole = BuildAtlas(trace, baseline, DtrSpec(), 0, 60, 1);
    REQUIRE(whole.intervals.size() == 7);
    for (size_t stop = 0; stop < whole.intervals.size(); ++stop) {
      INFO("stopped after ", stop);
      CheckSameAtlas(whole, InterruptAndResume(trace, baseline, 0, 60, 1, stop, 1));
      CheckSameAtlas(whole, InterruptAndResume(trace, baseline, 0, 60, 2, stop, 2));
    }
  }
  SUBCASE("unet 0.42-0.44, two workers, stopped after 40 intervals") {
    Trace trace = LoadTrace(TracePath("unet"));
    Baseline baseline = ComputeBaseline(trace);
    int64_t lo = BudgetForRatio(baseline.memory, 0.42), hi = BudgetForRatio(baseline.memory, 0.44);
    BudgetAtlas sequential = BuildAtlas(trace, baseline, DtrSpec(), lo, hi, 1);
    REQUIRE(sequential.intervals.size() > 60);
    // Parallel walks stitch runs cut at chunk borders back together.
    CheckSameAtlas(sequential, BuildAtlas(trace, baseline, DtrSpec(), lo, hi, 2));
    CheckSameAtlas(sequential, InterruptAndResume(trace, baseline, lo, hi, 2, 40, 2));
  }
  SUBCASE("finished intervals that overlap are refused") {
    Trace trace = Inversion5();
    Baseline baseline = ComputeBaseline(trace);
    BudgetAtlas whole = BuildAtlas(trace, baseline, DtrSpec(), 0, 60, 1);
    AtlasJournal bad;
    bad.finished = {whole.intervals[1], whole.intervals[1]};
    CHECK_THROWS_AS(BuildAtlas(trace, baseline, DtrSpec(), 0, 60, 1, nullptr, {}, &bad), Error);
  }
}

std::filesystem::path FreshTempPath(const char* name) {
  std::filesystem::path p = TempPath(name);
  std::filesystem::remove(p);
  return p;
}

TEST_CASE("atlas checkpoint file: round trip, another walk's file, a torn last line") {
  Trace trace = Inversion5();
  Baseline baseline = ComputeBaseline(trace);
  RunSpec spec = DtrSpec();
  BudgetAtlas whole = BuildAtlas(trace, baseline, spec, 0, 60, 1);
  AtlasWalkKey key = WalkKeyOf(FingerprintOf(trace, baseline, "sha-of-inversion5", "inversion5.log"), spec, 0, 60);
  std::filesystem::path path = FreshTempPath("dtrcheck_atlas_checkpoint_test.jsonl");
  {
    AtlasCheckpoint fresh(path.string(), key, baseline);
    CHECK(fresh.finished().empty());
    for (size_t i = 0; i < 4; ++i) fresh.Append(whole.intervals[i]);
  }
  {
    AtlasCheckpoint reopened(path.string(), key, baseline);
    REQUIRE(reopened.finished().size() == 4);
    AtlasJournal journal = reopened.Journal();
    BudgetAtlas resumed = BuildAtlas(trace, baseline, spec, 0, 60, 1, nullptr, {}, &journal);
    CheckSameAtlas(whole, resumed);
    CHECK(resumed.runs == whole.runs);
  }
  CHECK(AtlasCheckpoint(path.string(), key, baseline).finished().size() == 7);

  // Another heuristic or range: refused, the file untouched.
  std::string before = Slurp(path);
  AtlasWalkKey lru = key;
  lru.heuristic = "LRU";
  CHECK_THROWS_WITH_AS(
      AtlasCheckpoint(path.string(), lru, baseline),
      (path.string() +
       ": checkpoint of another walk: heuristic is \"LRU\" here, \"DTR\" in the file")
          .c_str(),
      Error);
  AtlasWalkKey wider = key;
  wider.budget_hi = 61;
  CHECK_THROWS_AS(AtlasCheckpoint(path.string(), wider, baseline), Error);
  AtlasWalkKey edited_trace = key;
  edited_trace.trace.sha256 = "sha-of-another-file";
  CHECK_THROWS_WITH_AS(AtlasCheckpoint(path.string(), edited_trace, baseline),
                       (path.string() +
                        ": checkpoint of another walk: trace_sha256 is \"sha-of-another-file\" here, "
                        "\"sha-of-inversion5\" in the file")
                           .c_str(),
                       Error);
  CHECK(Slurp(path) == before);

  // A walk killed mid-line: the torn line is cut, the rest kept.
  std::filesystem::resize_file(path, before.size() - 10);
  CHECK(AtlasCheckpoint(path.string(), key, baseline).finished().size() == 6);
  CHECK(Slurp(path).back() == '\n');

  // An edited line (valid JSON, another clock) is refused with FILE:LINE,
  // and so is a duplicated line; the file is left as it was.
  {
    std::string text = Slurp(path);
    size_t line3 = text.find('\n', text.find('\n') + 1) + 1;  // the second interval line
    size_t clock = text.find("\"clock\":", line3) + 8;
    std::string edited = text;
    edited.insert(clock, "1");
    std::ofstream(path, std::ios::binary) << edited;
    CHECK_THROWS_WITH_AS(AtlasCheckpoint(path.string(), key, baseline),
                         (path.string() +
                          ":3: the line does not match its checksum (edited after it was written?); delete the "
                          "checkpoint to start over")
                             .c_str(),
                         Error);
    CHECK(Slurp(path) == edited);
    std::string line = text.substr(line3, text.find('\n', line3) + 1 - line3);
    std::ofstream(path, std::ios::binary) << text << line;
    CHECK_THROWS_WITH_AS(AtlasCheckpoint(path.string(), key, baseline),
                         (path.string() + ":8: interval [" + std::to_string(whole.intervals[1].lo) + ", " +
                          std::to_string(whole.intervals[1].hi) + "] overlaps [" +
                          std::to_string(whole.intervals[1].lo) + ", " + std::to_string(whole.intervals[1].hi) +
                          "] on line 3")
                             .c_str(),
                         Error);
    std::ofstream(path, std::ios::binary) << text;
    CHECK(AtlasCheckpoint(path.string(), key, baseline).finished().size() == 6);
  }

  // Not a checkpoint at all: refused, nothing cut.
  std::filesystem::path junk = FreshTempPath("dtrcheck_atlas_checkpoint_junk.txt");
  std::ofstream(junk) << "lo,hi\n1,2";
  CHECK_THROWS_AS(AtlasCheckpoint(junk.string(), key, baseline), Error);
  CHECK(Slurp(junk) == "lo,hi\n1,2");
  // A file of the atlas's own format before it was shared with sweep and
  // scan: refused by its format, nothing cut.
  std::ofstream(junk, std::ios::binary) << "{\"format\":\"dtrcheck-atlas-checkpoint\",\"version\":2}\n{\"lo\":1";
  CHECK_THROWS_WITH_AS(AtlasCheckpoint(junk.string(), key, baseline),
                       (junk.string() +
                        ": checkpoint of another walk: format is \"dtrcheck-checkpoint\" here, "
                        "\"dtrcheck-atlas-checkpoint\" in the file")
                           .c_str(),
                       Error);
  CHECK(Slurp(junk) == "{\"format\":\"dtrcheck-atlas-checkpoint\",\"version\":2}\n{\"lo\":1");
  std::filesystem::remove(path);
  std::filesystem::remove(junk);
}

}  // namespace
}  // namespace dtr::testing
