// The checkpoint of an atlas walk (docs/checkpoint.md): a CheckpointJournal
// (checker/persist/checkpoint_journal.h) whose header names the walk (trace,
// heuristic, runtime, overhead limit, seed, range) and whose lines are the
// finished intervals, appended as the walk records them. An interrupted walk
// reopened with the same file replays only the budgets no line covers, and
// ends with the same atlas.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/drivers/budget_atlas.h"
#include "checker/persist/checkpoint_journal.h"

namespace dtr {

// What a checkpoint must match to be resumed: the same trace, the same
// replay settings and the same byte range.
struct AtlasWalkKey {
  TraceFingerprint trace;
  std::string heuristic;
  ReplayKey replay;
  int64_t budget_lo = 0, budget_hi = 0;
};

AtlasWalkKey WalkKeyOf(const TraceFingerprint& trace, const ReplaySettings& spec, int64_t lo_bytes, int64_t hi_bytes);

// The header of `atlas --checkpoint`: CheckpointHeader("atlas", ...), then
// the key's heuristic, settings and range. (`scan --exact` writes a grid
// header with the range added, checker/persist/grid_checkpoint.h.)
nlohmann::ordered_json AtlasHeader(const AtlasWalkKey& key);

class AtlasCheckpoint {
 public:
  // Opens `path` as CheckpointJournal does for `header` (a checkpoint of
  // another walk is an InputError naming the key that differs) and reads its
  // intervals (InputError "PATH:LINE: ..." for a malformed line, one outside
  // [budget_lo, budget_hi] or overlapping another); `baseline` gives their
  // overheads back bit for bit. Under MPI, every rank reads the intervals
  // rank 0 read.
  AtlasCheckpoint(const std::string& path, const nlohmann::ordered_json& header, const Baseline& baseline,
                  int64_t budget_lo, int64_t budget_hi);
  AtlasCheckpoint(const std::string& path, const AtlasWalkKey& key, const Baseline& baseline)
      : AtlasCheckpoint(path, AtlasHeader(key), baseline, key.budget_lo, key.budget_hi) {}

  // The intervals read on open, in file order.
  const std::vector<AtlasInterval>& finished() const { return finished_; }
  // Appends one interval line and flushes it; on MPI rank 0 only.
  void Append(const AtlasInterval& interval);
  // A journal for BuildAtlas that starts from finished() and appends here.
  AtlasJournal Journal();

 private:
  CheckpointJournal journal_;
  std::vector<AtlasInterval> finished_;
};

}  // namespace dtr
