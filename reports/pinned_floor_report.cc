#include "reports/pinned_floor_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include "model/attribution.h"
#include "reports/number_format.h"

namespace dtr {

namespace {

// How a storage of the floor is named in its part: the NAME of its ROLE
// ("layer1.0.conv1.weight", "momentum_buffer layer1.0.conv1.weight"), else
// its label (an input, a parameter outside the model, a storage without a
// role).
std::string MemberName(const Trace& trace, StorageId s) {
  const Attribution& a = *trace.attribution;
  const int32_t role = a.storage_role[s];
  if (role >= 0) {
    const std::string& text = a.roles[role];
    const size_t space = text.find(' ');
    if (space != std::string::npos) return text.substr(space + 1);
    return trace.tensors[trace.storages[s].root].name;
  }
  return StorageLabel(trace, s);
}

double Ratio(const PinnedFloor& f, const Baseline& b) {
  return b.memory > 0 ? static_cast<double>(f.bytes) / static_cast<double>(b.memory) : 0.0;
}

}  // namespace

void PrintPinnedFloorText(std::ostream& out, const Trace& trace, const PinnedFloor& f, const Baseline& b) {
  fmt::print(out, "  pinned at the end  {} bytes ({}, ratio {:.6f} of the baseline) in {} storages:\n",
             f.bytes, HumanBytes(f.bytes), Ratio(f, b), f.storages);
  for (int part = 0; part <= kRoleKinds; ++part) {
    const PinnedFloorPart& p = f.parts[part];
    std::string largest;
    for (StorageId s : p.largest)
      largest += fmt::format("{}{} {}", largest.empty() ? "" : ", ", MemberName(trace, s),
                             HumanBytes(trace.storages[s].size));
    if (p.storages > static_cast<int32_t>(p.largest.size())) largest += ", ...";
    fmt::print(out, "    {:<16} {:>14} bytes {:>6} storage{}{}{}\n", PinnedFloorPartName(part), p.bytes,
               p.storages, p.storages == 1 ? " " : "s", largest.empty() ? "" : "  ", largest);
  }
  fmt::print(out,
             "  DTR evicts only storages that are not pinned (the activations while the step uses "
             "them): these {} bytes stay whatever it evicts, and no budget below them fits\n",
             f.bytes);
  const PinnedFloorPart& grads = f.parts[static_cast<int>(RoleKind::kGradient)];
  if (grads.from_start_bytes > 0)
    fmt::print(out,
               "  {} of the gradients are held from the start of the step (CONSTANTs: zero_grad() "
               "zeroed them instead of setting them to None), under the whole forward; capture the "
               "step with zero_grad(set_to_none=True) to measure the floor without them\n",
               HumanBytes(grads.from_start_bytes));
}

nlohmann::ordered_json PinnedFloorJson(const Trace& trace, const PinnedFloor& f, const Baseline& b) {
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  for (int part = 0; part <= kRoleKinds; ++part) {
    const PinnedFloorPart& p = f.parts[part];
    nlohmann::ordered_json largest = nlohmann::ordered_json::array();
    for (StorageId s : p.largest) {
      nlohmann::ordered_json one = {{"storage", trace.tensors[trace.storages[s].root].name},
                                    {"name", MemberName(trace, s)},
                                    {"bytes", trace.storages[s].size}};
      AddRoleJson(one, trace, s);
      largest.push_back(std::move(one));
    }
    parts.push_back({{"part", PinnedFloorPartName(part)},
                     {"bytes", p.bytes},
                     {"storages", p.storages},
                     {"from_start_bytes", p.from_start_bytes},
                     {"largest", std::move(largest)}});
  }
  return {{"bytes", f.bytes}, {"ratio", Ratio(f, b)}, {"storages", f.storages}, {"parts", std::move(parts)}};
}

std::string PinnedFloorLine(const PinnedFloor& f) {
  std::string line;
  for (int part = 0; part <= kRoleKinds; ++part)
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", PinnedFloorPartName(part),
                        HumanBytes(f.parts[part].bytes));
  return line;
}

}  // namespace dtr
