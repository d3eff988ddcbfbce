// What the memory pinned at the end of the program is made of, by the ROLE
// keys of a captured trace (docs/trace_format.md, "Attribution keys").
//
// Every storage pinned at the end (the constants, pinned when made, and every
// storage a name still holds when the trace ends) is material at once after
// the last step, whatever was evicted: their total is the static bound's
// final term (checker/proofs/memory_bound.h, MemoryBound::final_pinned), and no
// budget below it fits. DTR acts only on the storages that are not pinned.
// The breakdown puts each of those storages in exactly one part, by its
// role (Attribution::storage_role), or in "other" (activations and outputs
// kept to the end) when it has none: the parts sum to the total.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "model/attribution.h"
#include "model/trace.h"

namespace dtr {

struct PinnedFloorPart {
  int64_t bytes = 0;
  int32_t storages = 0;
  // Of those, the CONSTANTs: allocated before the step began and held all
  // through it (gradients zero_grad() zeroed instead of freeing, optimizer
  // state), where the rest is made during the step.
  int64_t from_start_bytes = 0;
  std::vector<StorageId> largest;  // the largest, largest first (equal sizes: first pinned first)
};

struct PinnedFloor {
  int64_t bytes = 0;  // == MemoryBound::final_pinned
  int32_t storages = 0;
  // By RoleKind (parameters, gradients, optimizer state, buffers, inputs),
  // then the storages without a role.
  std::array<PinnedFloorPart, kRoleKinds + 1> parts;
  static constexpr int kOther = kRoleKinds;
};

// The breakdown, with up to `largest` storages named per part; nullopt for a
// trace without ROLE keys.
std::optional<PinnedFloor> ExplainPinnedFloor(const Trace& trace, size_t largest = 3);

// "parameters", "gradients", "optimizer state", "buffers", "inputs", "other"
const char* PinnedFloorPartName(int part);

}  // namespace dtr
