#include "model/attribution.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace dtr {

std::string_view PhaseName(Phase p) {
  switch (p) {
    case Phase::kUnknown: return "";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizer: return "optimizer";
  }
  return "";
}

std::optional<Phase> ParsePhase(std::string_view text) {
  for (Phase p : {Phase::kForward, Phase::kBackward, Phase::kOptimizer})
    if (text == PhaseName(p)) return p;
  return std::nullopt;
}

std::string_view RoleKindName(RoleKind k) {
  switch (k) {
    case RoleKind::kParameter: return "parameter";
    case RoleKind::kGradient: return "gradient";
    case RoleKind::kOptimizer: return "optimizer";
    case RoleKind::kBuffer: return "buffer";
    case RoleKind::kInput: return "input";
  }
  return "";
}

std::optional<RoleKind> ParseRole(std::string_view text) {
  const size_t space = text.find(' ');
  const std::string_view word = text.substr(0, space);
  const std::string_view rest = space == std::string_view::npos ? "" : text.substr(space + 1);
  for (int i = 0; i < kRoleKinds; ++i) {
    const RoleKind k = static_cast<RoleKind>(i);
    if (word != RoleKindName(k)) continue;
    if (space != std::string_view::npos && rest.empty()) return std::nullopt;  // a trailing space
    if (k == RoleKind::kOptimizer && rest.empty()) return std::nullopt;       // no KEY
    if (k == RoleKind::kInput && !rest.empty()) return std::nullopt;
    return k;
  }
  return std::nullopt;
}

namespace {

int32_t At(const std::vector<int32_t>& v, int32_t i) {
  return i >= 0 && static_cast<size_t>(i) < v.size() ? v[i] : -1;
}

}  // namespace

std::string OperatorOrigin(const Trace& trace, OpId op) {
  const Attribution* a = trace.attribution.get();
  if (!a || op < 0 || static_cast<size_t>(op) >= a->op_phase.size()) return "";
  const int32_t module = At(a->op_module, op), source = At(a->op_source, op);
  const Phase phase = a->op_phase[op];
  std::string text;
  if (module >= 0) {
    const std::string& m = a->modules[module];
    text = m.empty() ? "the model" : "module " + m;
    if (phase == Phase::kBackward) text = "backward of " + text;
  } else if (phase == Phase::kBackward || phase == Phase::kOptimizer) {
    text = std::string(PhaseName(phase));
  }
  if (source >= 0) text += (text.empty() ? "" : ", ") + a->sources[source];
  return text;
}

namespace {

std::string Label(std::string_view name, std::string_view detail, const std::string& origin) {
  std::string text(name);
  if (detail.empty() && origin.empty()) return text;
  text += " (";
  text += detail;
  if (!detail.empty() && !origin.empty()) text += "; ";
  text += origin;
  text += ")";
  return text;
}

}  // namespace

std::string OperatorLabel(const Trace& trace, OpId op, std::string_view detail) {
  return Label(trace.ops[op].name, detail, OperatorOrigin(trace, op));
}

OpId FindOperator(const Trace& trace, std::string_view op_name) {
  const size_t slash = op_name.rfind('/');
  if (slash == std::string_view::npos) return -1;
  OpId id = -1;
  const char* end = op_name.data() + op_name.size();
  auto [stop, ec] = std::from_chars(op_name.data() + slash + 1, end, id);
  if (ec != std::errc() || stop != end || id < 0 || static_cast<size_t>(id) >= trace.ops.size() ||
      trace.ops[id].name != op_name)
    return -1;
  return id;
}

std::string OperatorLabel(const Trace& trace, std::string_view op_name, std::string_view detail) {
  const OpId op = trace.attribution ? FindOperator(trace, op_name) : -1;
  return Label(op_name, detail, op < 0 ? std::string() : OperatorOrigin(trace, op));
}

std::string StorageOrigin(const Trace& trace, StorageId s) {
  const Attribution* a = trace.attribution.get();
  if (!a) return "";
  if (const int32_t role = At(a->storage_role, s); role >= 0) return a->roles[role];
  return OperatorOrigin(trace, trace.tensors[trace.storages[s].root].op);
}

std::string StorageLabel(const Trace& trace, StorageId s) {
  return Label(trace.tensors[trace.storages[s].root].name, "", StorageOrigin(trace, s));
}

void AddOriginJson(nlohmann::ordered_json& j, const Trace& trace, OpId op, const std::string& prefix) {
  const Attribution* a = trace.attribution.get();
  if (!a || op < 0) return;
  if (const int32_t m = At(a->op_module, op); m >= 0) j[prefix + "module"] = a->modules[m];
  if (const int32_t s = At(a->op_source, op); s >= 0) j[prefix + "source"] = a->sources[s];
}

void AddRoleJson(nlohmann::ordered_json& j, const Trace& trace, StorageId s, const std::string& prefix) {
  const Attribution* a = trace.attribution.get();
  if (!a) return;
  if (const int32_t role = At(a->storage_role, s); role >= 0) j[prefix + "role"] = a->roles[role];
}

}  // namespace dtr
