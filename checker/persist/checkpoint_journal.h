// The one checkpoint file of dtrcheck (docs/checkpoint.md), used by `atlas`
// (checker/persist/atlas_checkpoint.h), `sweep` and `scan` (checker/persist/grid_checkpoint.h):
// JSON lines, a header naming the work, then one signed line per finished
// piece of it, appended and flushed as the piece finishes.
//
// Invariants of a file this class has opened:
//   - its first line is the header, equal key for key to the one asked for;
//   - every later line is whole (ends in '\n') and carries "check", the
//     checksum of the line without it; a torn last line (the writer died in
//     the middle of it) is cut from the file on open, before anything is
//     appended, and the piece it held is redone.
// A file whose first line is not a header is refused before anything is cut.
// One writer at a time: the writer holds an advisory lock on the file
// (model/file_lock.h) from before it reads it until it is destroyed; a second
// journal on the same file, in this process or another, is refused at once.
#pragma once

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/engine/replay.h"
#include "checker/engine/replay_settings.h"
#include "model/file_lock.h"

namespace dtr {

// What names a trace in a checkpoint header: the SHA-256 of its bytes, its
// file name, and its parsed size and baseline (a guard against a dtrcheck
// whose parser reads the same bytes differently).
struct TraceFingerprint {
  std::string sha256;  // hex, of the file's bytes
  std::string log;     // the trace's file name
  int64_t baseline_memory = 0, baseline_compute = 0;
  int64_t operators = 0, tensors = 0, storages = 0, program_steps = 0;
};
TraceFingerprint FingerprintOf(const Trace& trace, const Baseline& baseline, std::string sha256, std::string log);

// The keys every checkpoint header starts with: "format", "version",
// "command", then the trace's (docs/checkpoint.md). Commands add theirs.
nlohmann::ordered_json CheckpointHeader(std::string_view command, const TraceFingerprint& trace);

// The replay settings every checkpoint of replays names, after its
// heuristic or heuristics (atlas: checker/persist/atlas_checkpoint.h; sweep and
// scan: checker/persist/grid_checkpoint.h).
struct ReplayKey {
  std::string runtime;
  std::optional<double> overhead_limit;
  uint64_t seed = 0;
};
ReplayKey ReplayKeyOf(const ReplaySettings& settings);  // its heuristic is not part of the key
// Appends "runtime", "overhead_limit" (null: none) and "seed" to `header`.
void AddReplayKey(nlohmann::ordered_json& header, const ReplayKey& key);

// The outcome a checkpoint line names by OutcomeName; InputError for another word.
Outcome OutcomeOfLine(const std::string& name);

class CheckpointJournal {
 public:
  struct Entry {
    int line = 0;  // 1-based line number in the file (the header is line 1)
    nlohmann::ordered_json fields;  // the line without "check"
  };

  // Opens `path` for the work `header` describes (a JSON object; its first
  // keys should be "format", "version", "command"). A missing or empty file
  // is created with the header. Otherwise the first line must be a header
  // (else InputError "PATH: not a dtrcheck checkpoint ...") equal to
  // `header` key for key (else InputError "PATH: checkpoint of another
  // WORK: KEY is X here, Y in the file", `work` naming what the file is of,
  // e.g. "walk"), and every line after it must be signed JSON (else
  // InputError "PATH:LINE: ..."). A file another journal holds (another
  // run writing it) is refused before it is read: InputError "PATH: in use
  // by another dtrcheck run (pid N)".
  // Under MPI (checker/farm/mpi_farm.h) the file is rank 0's: it reads, repairs
  // and appends; every rank gets its entries (and its Error). All ranks must
  // construct it at the same point.
  CheckpointJournal(std::string path, const nlohmann::ordered_json& header, std::string_view work);

  const std::string& path() const { return path_; }
  // The lines read on open, in file order.
  const std::vector<Entry>& entries() const { return entries_; }

  // Appends `fields` (a JSON object without "check") as one signed line and
  // flushes it. Throws InputError if writing fails. Does nothing on MPI
  // ranks other than 0.
  void Append(const nlohmann::ordered_json& fields);

  // InputError "PATH:LINE: what", for a line whose content its reader refuses.
  [[noreturn]] void FailAt(int line, std::string_view what) const;

 private:
  std::string Open(const nlohmann::ordered_json& header, std::string_view work);  // rank 0: read, repair

  std::string path_;
  std::vector<Entry> entries_;
  FileLock lock_;  // rank 0: held from before the file is read until destruction
  std::ofstream out_;
};

}  // namespace dtr
