// Eviction scripts: the schedule a run followed, as data (docs/eviction_script.md).
//
// A script lists (event, storage) pairs: before operator computation number
// `event` of the run (model and rematerializations counted from 0, as the
// replay counts them), evict `storage`. The runtime's own behaviour is not
// scripted: rematerializations happen on demand and eager evictions as the
// runtime does them. Replayed with ReplayConfig::script, a script is checked
// against a budget (checker/proofs/schedule_checker.h).
#pragma once

#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "checker/engine/replay.h"
#include "model/trace.h"

namespace dtr {

struct EvictionScript {
  std::vector<ScriptedEviction> entries;  // sorted by event
};

// Reads the text format. A storage is named by any of its tensors (scripts
// written here use the root tensor). Throws Error "SOURCE:LINE: message" for
// a malformed line, an unknown tensor or events out of order.
EvictionScript ParseEvictionScript(std::istream& in, const std::string& source, const Trace& trace);
EvictionScript ParseEvictionScriptString(std::string_view text, const std::string& source,
                                         const Trace& trace);
EvictionScript LoadEvictionScript(const std::string& path, const Trace& trace);

// Writes the text format; `comment` lines (may be empty) are written first as '# ' lines.
void WriteEvictionScript(std::ostream& out, const Trace& trace, const EvictionScript& script,
                         const std::vector<std::string>& comment = {});
void SaveEvictionScript(const std::string& path, const Trace& trace, const EvictionScript& script,
                        const std::vector<std::string>& comment = {});

// A run and the script of its heuristic evictions (overrides included, and
// the scripted ones if config has both a script and a heuristic). At
// any budget of at least run.max_memory, that script replays to the same run
// (same events, clock and evictions) and passes if the run passed; below it,
// it fails at the computation where the run's memory peaked first.
struct ScriptedRun {
  RunResult run;
  EvictionScript script;
};
// config.observer, if any, sees the run too (a decision log written with it).
ScriptedRun ScriptOfRun(const Trace& trace, const ReplayConfig& config);

// The engine of the script's run (`runtime`, no budget) at the first
// computation point of program step `step` or later, with the entries of
// earlier events applied (none of that event's); at the end of the run if it
// ends first. Throws Error if an entry cannot be applied on the way.
Engine ScriptedStateBeforeStep(const Trace& trace, RuntimeKind runtime, const EvictionScript& script,
                               int32_t step);

}  // namespace dtr
