// A trace as a command reads it: the parse, simrd's baseline and the summary
// the outputs start with, each computed once per command (and once per
// dtrcheck.load() in Python, whose calls share it).
#pragma once

#include <optional>
#include <string>

#include "checker/engine/replay.h"
#include "checker/persist/checkpoint_journal.h"
#include "model/trace.h"
#include "reports/run_report.h"

namespace dtr::api {

struct LoadedTrace {
  std::string path;  // "" for the embedded demo
  Trace trace;
  Baseline baseline;
  TraceSummary summary;

  // The trace as checkpoint headers name it (checker/persist/checkpoint_journal.h):
  // the SHA-256 of the file, its name, size and baseline. Reads the file
  // again; only commands with a checkpoint ask.
  TraceFingerprint Fingerprint() const;
};

// Parses the file at `path` and replays its baseline. Throws InputError for
// a bad trace (model/error.h).
LoadedTrace LoadTraceFile(const std::string& path);

// The embedded demo trace (traces/demo.h), named "demo".
LoadedTrace LoadDemoTrace();

}  // namespace dtr::api
