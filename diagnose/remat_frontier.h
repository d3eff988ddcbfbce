// The pinned recursive rematerialization frontier at a decision point or an
// OOM: the pending materializations (frames), the storages each one holds
// locked, and the arithmetic of pinned + locked + request against the budget.
//
// DTR materializes an argument that is not defined by recursing into its
// operator; each pending frame keeps its operator's arguments locked (not
// evictable) until it computes. The frontier says how much memory that
// recursion holds hostage. Two bounds come with it:
//  - floor: pinned + locked + request of the innermost computation. If it
//    exceeds the budget, no eviction can make the computation fit (at an
//    OOM it always does).
//  - completion need of each frame k: the storages pinned, those the outer
//    frames hold now (they keep them until frame k is done), every argument
//    of frame k's operator, and its request. Any continuation of the run from
//    this state, with any evictions, reaches that memory at frame k's budget
//    check; if one exceeds the budget, the run is doomed from here.
// Besides these, the rest of the recursion is predicted by letting the
// runtime continue without evicting anything (the remat tree of what is still
// to compute), and the evicted region the pending frames still need is
// computed on the storage graph (Boost.Graph): the evicted ancestors of their
// missing arguments and the material storages on its border.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/engine/engine.h"
#include "checker/engine/replay.h"
#include "model/trace.h"

namespace dtr {

// The state of one argument storage of a frame's operator at the frontier.
enum class ArgState {
  kPinned,     // a pinned storage
  kLocked,     // material, locked by this frame and by no outer one
  kHeldAbove,  // material, locked by an outer frame already
  kEvicted,    // not material: still to be rematerialized (or being so)
  kUnlocked,   // material but not locked by this frame (yet)
};
// "pinned", "locked", "held-above", "evicted", "unlocked"
std::string_view ArgStateName(ArgState s);

struct FrontierArg {
  TensorId tensor = 0;  // the first argument naming the storage
  StorageId storage = 0;
  ArgState state = ArgState::kEvicted;
};

struct FrontierFrame {
  int32_t depth =
      0;  // 0: the program operator (or a final pin), then one per pending rematerialization
  TensorId tensor = 0;
  bool remat = false;
  int64_t request = 0;           // the operator's total output size
  std::vector<StorageId> locks;  // unpinned storages this frame holds locked (distinct)
  int64_t new_locked_bytes = 0;  // of those, the bytes no outer frame holds
  int64_t completion_need = 0;   // see the file comment
  std::vector<TensorId>
      missing;  // arguments not defined yet (still to be materialized by this frame)
  std::vector<FrontierArg> args;  // the operator's distinct argument storages, in argument order
};

struct LockedStorage {
  StorageId storage = 0;
  int64_t size = 0;
  std::vector<int32_t> holders;  // depths of the frames holding a lock on it
};

// One computation of the predicted rest of the recursion (no evictions).
struct PredictedComputation {
  TensorId tensor = 0;
  int32_t depth = 0;
  int64_t floor = 0;  // pinned + locked + request then
};

struct RematFrontier {
  int64_t budget = 0;
  int64_t event = 0;                // the computation being decided
  std::optional<int64_t> decision;  // decision index, if taken at a decision point
  bool at_oom = false;
  int32_t program_step = 0;
  std::vector<FrontierFrame> frames;  // outermost first
  std::vector<LockedStorage> locked;  // largest first
  bool holders_consistent = true;     // the frames' locks add up to the runtime's lock counts
  int64_t memory_usage = 0;
  int64_t pinned_bytes = 0;
  int32_t pinned_storages = 0;
  int64_t locked_bytes = 0;
  int64_t evictable_bytes = 0;  // material, unpinned, unlocked
  int32_t evictable_storages = 0;
  int64_t request = 0;  // the innermost frame's
  int64_t floor() const { return pinned_bytes + locked_bytes + request; }
  int64_t peak_completion_need = 0;  // max over frames
  int32_t peak_frame = 0;            // depth attaining it
  bool doomed() const { return peak_completion_need > budget; }
  // The evicted region the pending frames still need (storage graph).
  std::vector<StorageId> evicted_region;  // evicted ancestors of the missing arguments
  int64_t evicted_region_bytes = 0;
  std::vector<StorageId> region_border;  // material storages adjacent to it (will be locked)
  int64_t region_border_bytes = 0;
  // The rest of the program step's recursion if nothing more is evicted.
  std::vector<PredictedComputation> predicted;
  int64_t predicted_peak_floor = 0;
};

// From a runtime state at a computation point.
RematFrontier AnalyzeFrontier(const Engine& state, int64_t budget);

// At the OOM of the run `config` describes (a heuristic run; RuntimeV2
// family). Throws Error if the run does not end in an OOM. The analysed
// state is the engine's where the run stopped, checked against its OOM context.
RematFrontier FrontierAtOom(const Trace& trace, const ReplayConfig& config);
// Just before decision `decision` of that run (0-based). Throws Error if the
// run has fewer decisions.
RematFrontier FrontierAtDecision(const Trace& trace, const ReplayConfig& config, int64_t decision);

}  // namespace dtr
