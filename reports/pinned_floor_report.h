// Renders the pinned floor of a captured trace (diagnose/pinned_floor.h):
// what the memory pinned at the end is made of, by parameters, gradients,
// optimizer state, buffers, inputs and the rest, with the largest by name.
// `info` prints the table, explain and prove one line where the static bound
// is the end's.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "checker/engine/replay.h"
#include "diagnose/pinned_floor.h"
#include "model/trace.h"

namespace dtr {

// The table (two-space indent), then one sentence of what DTR can act on.
void PrintPinnedFloorText(std::ostream& out, const Trace& trace, const PinnedFloor& f,
                          const Baseline& baseline);
// {"bytes", "ratio", "storages", "parts": [{"part", "bytes", "storages",
// "from_start_bytes", "largest": [{"storage", "name", "bytes", "role"}]}]}
// (docs/run_json.md).
nlohmann::ordered_json PinnedFloorJson(const Trace& trace, const PinnedFloor& f,
                                       const Baseline& baseline);
// "parameters 80 B, gradients 80 B, ..., other 0 B": one line.
std::string PinnedFloorLine(const PinnedFloor& f);

}  // namespace dtr
