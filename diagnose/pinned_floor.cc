#include "diagnose/pinned_floor.h"

#include <algorithm>

namespace dtr {

const char* PinnedFloorPartName(int part) {
  static const char* const kNames[kRoleKinds + 1] = {"parameters", "gradients", "optimizer state",
                                                     "buffers",    "inputs",    "other"};
  return part >= 0 && part <= kRoleKinds ? kNames[part] : "?";
}

std::optional<PinnedFloor> ExplainPinnedFloor(const Trace& trace, size_t largest) {
  const Attribution* a = trace.attribution.get();
  if (!a || !a->has_roles()) return std::nullopt;
  PinnedFloor f;
  // The pinned set in the order storages were first pinned, as
  // ComputeMemoryBound walks it.
  std::vector<uint8_t> pinned(trace.storages.size(), 0);
  std::array<std::vector<StorageId>, kRoleKinds + 1> members;
  for (const Step& st : trace.program) {
    if (st.kind != StepKind::kPin) continue;
    const StorageId s = trace.tensors[st.target].storage;
    if (pinned[s]) continue;
    pinned[s] = 1;
    const int32_t role = a->storage_role[s];
    const int part = role < 0 ? PinnedFloor::kOther : static_cast<int>(a->role_kinds[role]);
    PinnedFloorPart& p = f.parts[part];
    p.bytes += trace.storages[s].size;
    ++p.storages;
    if (trace.ops[trace.tensors[trace.storages[s].root].op].is_constant)
      p.from_start_bytes += trace.storages[s].size;
    members[part].push_back(s);
    f.bytes += trace.storages[s].size;
    ++f.storages;
  }
  for (int part = 0; part <= kRoleKinds; ++part) {
    std::vector<StorageId>& m = members[part];
    std::stable_sort(m.begin(), m.end(), [&](StorageId x, StorageId y) {
      return trace.storages[x].size > trace.storages[y].size;
    });
    m.resize(std::min(m.size(), largest));
    f.parts[part].largest = std::move(m);
  }
  return f;
}

}  // namespace dtr
