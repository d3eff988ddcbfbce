// The checkpoint file of an atlas walk (docs/atlas_checkpoint.md): a header
// line naming the walk (trace, heuristic, runtime, overhead limit, seed,
// range), then one line per finished interval, appended and flushed as the
// walk records it. An interrupted walk reopened with the same file replays
// only the budgets no line covers, and ends with the same atlas.
//
// A line is written whole or, if the process dies mid-write, torn at the end
// of the file; a torn last line is dropped (and cut from the file) on open.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "checker/budget_atlas.h"

namespace dtr {

// What a checkpoint must match to be resumed: the same trace (by file name,
// size and baseline), the same replay settings and the same byte range.
struct AtlasWalkKey {
  std::string log;  // the trace's file name
  int64_t baseline_memory = 0, baseline_compute = 0;
  int64_t operators = 0, tensors = 0, storages = 0, program_steps = 0;
  std::string heuristic, runtime;
  std::optional<double> overhead_limit;
  uint64_t seed = 0;
  int64_t budget_lo = 0, budget_hi = 0;
};

AtlasWalkKey WalkKeyOf(const Trace& trace, const std::string& log, const Baseline& baseline,
                       const RunSpec& spec, int64_t lo_bytes, int64_t hi_bytes);

class AtlasCheckpoint {
 public:
  // Opens `path`. A missing or empty file is created with the key's header.
  // Otherwise its header must equal `key` (else Error "PATH: checkpoint of
  // another walk: FIELD is X here, Y in the file") and its intervals are
  // read (Error "PATH:LINE: ..." for a malformed line); `baseline` gives
  // their overheads back bit for bit.
  AtlasCheckpoint(const std::string& path, const AtlasWalkKey& key, const Baseline& baseline);

  // The intervals read on open, in file order.
  const std::vector<AtlasInterval>& finished() const { return finished_; }
  // Appends one interval line and flushes it. Throws Error if writing fails.
  // Under MPI (checker/mpi_farm.h) the file is rank 0's: the constructor
  // reads it there and gives every rank its intervals (and every rank its
  // Error); Append does nothing on the other ranks.
  void Append(const AtlasInterval& interval);

 private:
  void Open(const AtlasWalkKey& key, const Baseline& baseline);  // reads path_ into finished_

  std::string path_;
  std::vector<AtlasInterval> finished_;
  std::ofstream out_;
};

}  // namespace dtr
