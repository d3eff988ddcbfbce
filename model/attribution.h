// The attribution keys of a captured trace (docs/trace_format.md,
// "Attribution keys"): for each operator its module path, phase and source
// line; for each tensor and storage what it is (a parameter, a gradient,
// optimizer state, ...). And the one way an operator or a storage is named
// for people: its trace name, then where it comes from when the trace says.
//
// A trace without the keys has no Attribution (Trace::attribution is null),
// and every label below is then the trace name alone, so that outputs of
// such traces do not change. The replay never reads any of this.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace dtr {

enum class Phase : uint8_t { kUnknown, kForward, kBackward, kOptimizer };
std::string_view PhaseName(Phase p);  // "", "forward", "backward", "optimizer"
// The PHASE value's phase; nullopt for anything else.
std::optional<Phase> ParsePhase(std::string_view text);

// What a long-lived tensor is: the first word of its ROLE ("parameter
// layer1.0.conv1.weight", "optimizer momentum_buffer layer1.0.conv1.weight").
enum class RoleKind : uint8_t { kParameter, kGradient, kOptimizer, kBuffer, kInput };
constexpr int kRoleKinds = 5;
// "parameter", "gradient", "optimizer", "buffer", "input"
std::string_view RoleKindName(RoleKind k);
// The kind of a ROLE value; nullopt if it is not one docs/trace_format.md
// lists (an unknown first word, "optimizer" without its KEY, an "input" with
// more words).
std::optional<RoleKind> ParseRole(std::string_view text);

// Indices into the string tables; -1 where the trace says nothing. Every
// per-operator vector has one entry per operator, every per-tensor vector one
// per tensor, every per-storage vector one per storage.
struct Attribution {
  std::vector<std::string> modules, sources, roles;  // each value once
  std::vector<RoleKind> role_kinds;                  // of roles[i]
  std::vector<int32_t> op_module, op_source;         // by OpId
  std::vector<Phase> op_phase;                       // by OpId
  std::vector<int32_t> tensor_role;                  // by TensorId: the ROLE of its MEMORY line
  // By StorageId: the role of a name that holds the storage when the trace
  // ends (the first such name, in the order names first appeared), else the
  // ROLE of one of its own tensors (a parameter updated out of place keeps
  // its first storage pinned as a constant).
  std::vector<int32_t> storage_role;
  // The module calls the ENTER keys record, in program order: the operator
  // each call's forward starts with and the module (an index into modules).
  // A module the trace names but never enters was not called itself (a
  // ModuleList, whose children its parent calls one by one).
  struct ModuleCall {
    OpId first_op;
    int32_t module;
  };
  std::vector<ModuleCall> module_calls;  // empty: no ENTER keys (captures before they were added)

  bool has_roles() const { return !roles.empty(); }
};

// "module layer3.1.conv2, resnet.py:92", "backward of module layer3.1.conv2,
// resnet.py:92", "optimizer, train.py:31", "train.py:29": what the trace
// says of the operator; "" when it says nothing (always for a trace without
// attribution keys). The model itself (MODULE "") is "the model".
std::string OperatorOrigin(const Trace& trace, OpId op);
// How an operator is named for people: "convolution/57 (module layer1.0.conv1,
// resnet.py:92)", or the trace name alone when the origin is empty. With
// `detail` (a tensor, sizes), it goes first inside the parentheses:
// "convolution/57 (x91; module layer1.0.conv1, resnet.py:92)", and
// "convolution/57 (x91)" without an origin.
std::string OperatorLabel(const Trace& trace, OpId op, std::string_view detail = "");
// The same for an operator given by its trace name (OomContext's strings):
// operators are named "NAME/ID" with ID their OpId. A name that is not one
// of the trace's operators keeps no origin.
std::string OperatorLabel(const Trace& trace, std::string_view op_name, std::string_view detail = "");
OpId FindOperator(const Trace& trace, std::string_view op_name);  // -1 if none

// "parameter layer1.0.conv1.weight", or else the origin of the operator that
// allocated the storage; "" when the trace says nothing.
std::string StorageOrigin(const Trace& trace, StorageId s);
// The storage's root tensor name, then " (origin)" when there is one.
std::string StorageLabel(const Trace& trace, StorageId s);

// Adds "<prefix>module" and "<prefix>source" to `j` where the trace has them
// for the operator (nothing for a trace without attribution keys).
void AddOriginJson(nlohmann::ordered_json& j, const Trace& trace, OpId op,
                   const std::string& prefix = "");
// Adds "<prefix>role" where the storage has one.
void AddRoleJson(nlohmann::ordered_json& j, const Trace& trace, StorageId s,
                 const std::string& prefix = "");

}  // namespace dtr
