// The checkpoint of a grid of replays, `sweep` and `scan --checkpoint`
// (docs/checkpoint.md): a CheckpointJournal (checker/persist/checkpoint_journal.h)
// whose header names the grid (trace, heuristics, runtime, overhead limit,
// seed, the --ratios text, and the command's own flags) and whose lines are
// the finished points, each a heuristic and the whole RunResult of its
// replay, appended as the replay finishes. A rerun with the same file
// replays only the points no line holds (RunMany's GridJournal) and prints
// the same output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/drivers/sweep.h"
#include "checker/persist/checkpoint_journal.h"

namespace dtr {

// What a grid checkpoint must match to be resumed (with the keys a command
// adds to GridHeader's).
struct GridKey {
  TraceFingerprint trace;
  std::vector<std::string> heuristics;  // in grid order
  ReplayKey replay;
  std::string ratios;  // the grid as given (--ratios)
};

// `settings` gives runtime, overhead limit and seed (its heuristic is ignored).
GridKey GridKeyOf(const TraceFingerprint& trace, const ReplaySettings& settings, std::vector<std::string> heuristics,
                  std::string ratios);

// CheckpointHeader(command, ...), then the key's fields.
nlohmann::ordered_json GridHeader(std::string_view command, const GridKey& key);

// A RunResult as one JSON object, every field (the per-storage counts as
// their length and [index, count] pairs of the nonzero ones), and back,
// exactly. FromJson throws nlohmann::json::exception or InputError.
nlohmann::ordered_json RunResultJson(const RunResult& result);
RunResult RunResultFromJson(const nlohmann::ordered_json& j);

class GridCheckpoint {
 public:
  // Opens `path` as CheckpointJournal does for `header`, then reads its
  // points: InputError "PATH:LINE: ..." for a malformed line, a heuristic
  // the header does not list, or a point that an earlier line holds.
  // Under MPI, every rank reads the points rank 0 read.
  GridCheckpoint(const std::string& path, const nlohmann::ordered_json& header);

  // The points read on open, in file order.
  const std::vector<GridPointResult>& finished() const { return finished_; }
  // Appends one point line and flushes it; on MPI rank 0 only.
  void Append(const GridPointResult& point);
  // A journal for RunMany that starts from finished() and appends here.
  GridJournal Journal();

 private:
  CheckpointJournal journal_;
  std::vector<GridPointResult> finished_;
};

}  // namespace dtr
