// The certificate store (format: docs/certificate_store.md): per trace and
// runtime, the best verified eviction script and the proven lower bound, so
// that `explain`, `prove` and `report` answer at once what `bounds` (or an
// earlier `explain` / `prove`) already established.
//
// A trace is identified by the SHA-256 of its bytes. A store is a directory
// holding one file per trace, DIR/<sha256>.json; a path to a single file is
// accepted too. Nothing read from a store is trusted: a stored script is
// checked again by the schedule checker at the budget asked, and a stored
// bound only says which argument to run again there (cut_bound.h, a Z3 window
// or the static bound). A file whose digest is not the trace's is refused.
//
// Saving keeps the store's rule under concurrency: under a lock file beside
// the store file (model/file_lock.h), the file on disk is read again, what
// this process offered is merged into it (per runtime the lower schedule and
// the higher bound), what this process dropped is left out, and the result
// is written whole to a temporary file and renamed over the old one
// (model/output_file.h). Under MPI only rank 0 writes (DiscardOutputFiles).
// Every failure to read or write a store is an InputError naming the store
// file, with the system's reason.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "checker/engine/replay.h"
#include "checker/proofs/eviction_script.h"
#include "checker/proofs/feasibility.h"
#include "model/trace.h"

namespace dtr {

struct StoredSchedule {
  int64_t peak = 0;    // the budget at which the script passed the checker when stored
  std::string source;  // the witness source ("z3 plan", "grid run", ...)
  std::string description;
  std::string found_by;  // the command that stored it ("bounds", "prove", "explain")
  EvictionScript script;
  // The compute of the script's run (the checker's clock), when known: of two
  // schedules with the same peak the store keeps the one with less.
  std::optional<int64_t> clock;
};
// Whether `a` is a better schedule than `b`: a lower peak, or the same peak
// with a known clock below b's (or b's unknown).
bool BetterSchedule(const StoredSchedule& a, const StoredSchedule& b);

// Which argument proves the stored bound.
enum class BoundArgument { kStatic, kCut, kWindow };
std::string_view BoundArgumentName(BoundArgument a);  // "static", "cut", "window"
BoundArgument ParseBoundArgument(const std::string& name);  // throws Error

struct StoredBound {
  int64_t bytes = 0;  // every budget below is infeasible
  BoundArgument argument = BoundArgument::kStatic;
  OpWindow window;           // kWindow: the window whose relaxation is unsat below `bytes`
  std::string description;  // for people: what the argument says
  std::string found_by;
};

struct RuntimeCertificates {
  std::optional<StoredSchedule> schedule;
  std::optional<StoredBound> bound;
};

struct CertificateFile {
  std::string sha256;      // of the trace's bytes
  std::string trace_name;  // file name when stored (informational)
  int32_t operators = 0, tensors = 0, storages = 0;
  int64_t baseline_memory = 0;
  std::map<std::string, RuntimeCertificates> runtimes;  // by RuntimeName()
};

// The certificates of a trace in a store: `store` names a directory (which
// may not exist yet) or an existing file.
class CertificateStore {
 public:
  // Opens the store for the trace read from `trace_path`; loads its file if
  // there is one. Throws Error if the file is malformed or belongs to another
  // trace.
  CertificateStore(const std::string& store, const std::string& trace_path, const Trace& trace,
                   int64_t baseline_memory);

  const std::string& path() const { return path_; }
  const std::string& digest() const { return file_.sha256; }
  const RuntimeCertificates* Find(RuntimeKind runtime) const;

  // Keep the lower schedule and the higher bound; true if the store changed.
  bool OfferSchedule(RuntimeKind runtime, const StoredSchedule& schedule);
  bool OfferBound(RuntimeKind runtime, const StoredBound& bound);
  // Forget a stored certificate that did not hold when checked again (a
  // tampered or stale store): removed here and, on Save, from the file, if
  // the file still holds the same one. True if it was stored.
  bool DropSchedule(RuntimeKind runtime, const StoredSchedule& schedule);
  bool DropBound(RuntimeKind runtime, const StoredBound& bound);
  // If something was offered or dropped since the last Save: merges it into
  // the file as it is on disk now (see above) and writes the file if that
  // changes it. True if the file was written. Throws InputError "PATH:
  // cannot write (REASON)" (PATH: the store file) or, for a file on disk
  // that cannot be read or is malformed, as the constructor does.
  bool Save();

 private:
  // The store file at path_ as it is on disk, or nullopt if there is none.
  std::optional<CertificateFile> ReadFile() const;

  const Trace& trace_;
  std::string trace_path_;
  int64_t baseline_memory_ = 0;
  std::string path_;
  CertificateFile file_;        // as read, with this process's offers and drops
  CertificateFile offered_;     // the runtimes' certificates this process offered and kept
  CertificateFile dropped_;     // ... and those it dropped
  bool dirty_ = false;
};

// Two certificates are the same if every stored field is.
bool SameSchedule(const StoredSchedule& a, const StoredSchedule& b);
bool SameBound(const StoredBound& a, const StoredBound& b);

// The file format alone (tests and the store use it).
std::string CertificateFileText(const Trace& trace, const CertificateFile& file);
// Throws Error "PATH: message" for a malformed file.
CertificateFile ParseCertificateFile(const std::string& text, const std::string& path,
                                     const Trace& trace);

// The store directory a command uses: `given` (--store, or Python's
// store=) if set, else $DTRCHECK_STORE, else "" (no store).
std::string StoreDirectory(const std::string& given);
// The store in `dir` for the trace read from `trace_path`; null when `dir` is
// "". Throws as the constructor does.
std::unique_ptr<CertificateStore> OpenStore(const std::string& dir, const std::string& trace_path,
                                            const Trace& trace, int64_t baseline_memory);

}  // namespace dtr
