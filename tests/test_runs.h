// Shared setup of tests that replay a trace with a heuristic: run specs at a
// budget or a ratio, storages by tensor name, and a public trace loaded with
// its baseline.
#pragma once

#include <cstdint>
#include <string>

#include "checker/drivers/sweep.h"
#include "checker/engine/replay.h"
#include "model/trace.h"

namespace dtr::testing {

// `heuristic` (default DTR, default runtime) at `budget` bytes.
RunSpec SpecAtBudget(int64_t budget, const char* heuristic = "DTR");
// `heuristic` at a ratio of the baseline memory, written as a user writes it ("0.102").
RunSpec SpecAtRatio(const char* ratio, const char* heuristic = "DTR");

StorageId StorageOf(const Trace& trace, const std::string& tensor);

struct LoadedTrace {
  Trace trace;
  Baseline baseline;
  // The replay configuration of `heuristic` at `ratio` on this trace.
  ReplayConfig ConfigAt(const char* ratio, const char* heuristic = "DTR") const;
};
// A public trace by name ("resnet32", see tests/test_paths.h) and its baseline.
LoadedTrace LoadWithBaseline(const std::string& name);

}  // namespace dtr::testing
