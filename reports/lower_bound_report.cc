#include "reports/lower_bound_report.h"

#include <fmt/core.h>

#include "model/attribution.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

std::string StorageName(const Trace& t, StorageId s) { return t.tensors[t.storages[s].root].name; }
std::string OpName(const Trace& t, OpId o) {
  return o >= 0 ? t.ops[o].name : o == kFinalPins ? "the final pins" : "-";
}
// In text: with its origin (model/attribution.h).
std::string OpLabel(const Trace& t, OpId o) { return o >= 0 ? OperatorLabel(t, o) : OpName(t, o); }

// "x9132 (179830784 bytes, kept since add/498)", ...
std::string KeptList(const Trace& t, const CutArgument& a) {
  std::string out;
  for (size_t i = 0; i < a.kept.size(); ++i)
    out += fmt::format("{}{} ({} bytes, from the frame of {})", i ? ", " : "",
                       StorageName(t, a.kept[i]), t.storages[a.kept[i]].size,
                       OpLabel(t, a.kept_since[i]));
  return out;
}

}  // namespace

ordered_json CutArgumentJson(const Trace& t, const CutArgument& a) {
  ordered_json j;
  j["argument"] = std::string(CutKindName(a.kind));
  j["op"] = OpName(t, a.op);
  AddOriginJson(j, t, a.op);
  j["previous"] = a.previous >= 0 ? ordered_json(OpName(t, a.previous)) : ordered_json(nullptr);
  j["budget"] = a.budget;
  j["need"] = a.need;
  j["carried"] = a.carried;
  j["cut"] = a.cut;
  j["expensive"] = a.expensive >= 0 ? ordered_json(OpName(t, a.expensive)) : ordered_json(nullptr);
  j["expensive_cost"] = a.expensive >= 0 ? ordered_json(a.expensive_cost) : ordered_json(nullptr);
  ordered_json kept = ordered_json::array();
  for (size_t i = 0; i < a.kept.size(); ++i)
    kept.push_back({{"storage", StorageName(t, a.kept[i])},
                    {"size", t.storages[a.kept[i]].size},
                    {"since", OpName(t, a.kept_since[i])}});
  j["kept"] = kept;
  ordered_json cut = ordered_json::array();
  for (StorageId s : a.cut_storages)
    cut.push_back({{"storage", StorageName(t, s)}, {"size", t.storages[s].size}});
  j["cut_storages"] = cut;
  if (a.kind == CutArgument::Kind::kCheckpoints) {
    ordered_json spans = ordered_json::array();
    for (size_t i = 0; i < a.spans.size(); ++i) {
      ordered_json path = ordered_json::array();
      for (StorageId s : a.spans[i]) path.push_back(StorageName(t, s));
      spans.push_back({{"needed_by", OpName(t, a.span_ops[i])}, {"storages", path}});
    }
    j["spans"] = spans;
  }
  return j;
}

std::string CutArgumentText(const Trace& t, const CutArgument& a) {
  switch (a.kind) {
    case CutArgument::Kind::kCut: {
      std::string cut;
      for (StorageId s : a.cut_storages)
        cut += fmt::format("{}{}", cut.empty() ? "" : ", ", StorageName(t, s));
      std::string text = fmt::format(
          "keep-or-recompute cut at the frame of {}: at the computation of {} memory holds its "
          "static need {}",
          OpLabel(t, a.op), OpLabel(t, a.previous), a.need);
      if (a.carried > 0) text += fmt::format(" + {} bytes kept across frames", a.carried);
      text += fmt::format(
          " + at least {} bytes that must stay material ({}), else {} {}, "
          "which needs {} bytes{}; {} > budget {}",
          a.cut, cut.empty() ? "-" : cut,
          a.op == kFinalPins ? "the final pins' frames recompute"
                             : OpLabel(t, a.op) + "'s frame recomputes",
          OpLabel(t, a.expensive), a.expensive_cost,
          a.expensive_beside_held
              ? " as the last such recomputation, beside the storages the final pins need that "
                "stay material then"
              : "",
          a.need + a.carried + a.cut, a.budget);
      if (!a.kept.empty()) text += fmt::format("; kept: {}", KeptList(t, a));
      return text;
    }
    case CutArgument::Kind::kKeep:
      return fmt::format(
          "keep-or-recompute cut: {} needs its static need {} + {} bytes of storages that must "
          "stay material through it = {} > budget {}; kept: {}",
          OpLabel(t, a.op), a.need, a.carried, a.need + a.carried, a.budget, KeptList(t, a));
    case CutArgument::Kind::kCheckpoints: {
      std::string held;
      for (size_t i = 0; i < a.cut_storages.size() && i < 3; ++i)
        held += fmt::format("{}{} ({} bytes, for {}: one of {} storages)", i ? ", " : "",
                            StorageName(t, a.cut_storages[i]), t.storages[a.cut_storages[i]].size,
                            OpLabel(t, a.span_ops[i]), a.spans[i].size());
      if (a.cut_storages.size() > 3)
        held += fmt::format(", ... ({} more)", a.cut_storages.size() - 3);
      return fmt::format(
          "checkpoints: at the computation of {} memory holds its static need {} + at least {} "
          "bytes of checkpoints for {} later operators (each needs an argument whose "
          "recomputation before it, in any frame within the budget beside the checkpoints the "
          "operators after that frame need, runs back to a storage material here: one per "
          "disjoint span, the smallest counted) = {} > budget {}; {}",
          OpLabel(t, a.op), a.need, a.cut, a.spans.size(), a.need + a.cut, a.budget, held);
    }
    case CutArgument::Kind::kEvicted:
      return fmt::format(
          "keep-or-recompute cut: {} must stay material from the computation of {} into the frame "
          "of {}, but its last release in between evicts it (eager runtime)",
          KeptList(t, a), OpLabel(t, a.previous), OpLabel(t, a.op));
  }
  return "?";
}

ordered_json CutBoundJson(const Trace& t, const CutBound& b, int64_t baseline_memory) {
  ordered_json j;
  j["bytes"] = b.bytes;
  j["ratio"] = static_cast<double>(b.bytes) / static_cast<double>(baseline_memory);
  j["raised"] = b.raised;
  j["argument"] = b.raised ? CutArgumentJson(t, b.attained_by) : ordered_json(nullptr);
  j["tests"] = b.tests;
  j["whole_walks"] = b.whole_walks;
  j["checkpoint_tests"] = b.checkpoint_tests;
  j["timed_out"] = b.timed_out;
  return j;
}

}  // namespace dtr
