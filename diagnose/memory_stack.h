// The memory of one run stacked by what holds it: at one computation per
// column of program steps (the one with the most memory in use), the bytes
// of every resident storage, summed into a few bands: the storages that hold
// the most memory over the run, constants and the rest; and, for a trace
// with module attribution (docs/trace_format.md, "Attribution keys"), by
// module (the deepest level of the MODULE paths that names at most as many
// modules as the view has bands, and at least two if any level does:
// "layer1" for torchvision's ResNet-18, "layers.0" for examples/resnet.py,
// "0.conv" for a model wrapped in one Sequential), with parameters,
// gradients and optimizer state apart.
// What the report's stacked memory view draws (reports/report_figures.h).
//
// Invariant: in every column the bands' bytes sum to `memory`, the memory in
// use right after that computation's outputs were allocated (the timeline's
// TimelinePoint::memory). An output computed again while its first copy is
// resident counts twice, as the engine counts it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/drivers/sweep.h"
#include "checker/engine/replay.h"
#include "model/attribution.h"
#include "model/trace.h"

namespace dtr {

struct StackBand {
  enum class Kind : uint8_t {
    kStorage,    // `storage`
    kConstants,  // every storage a CONSTANT allocated
    kModule,     // storages allocated by operators of module `module` or its submodules
    kRole,       // storages whose ROLE is of kind `role` (parameters, gradients, ...)
    kNoModule,   // storages allocated by operators outside every module
    kOther,      // everything no other band holds; always the last band
  };
  Kind kind = Kind::kOther;
  StorageId storage = -1;
  std::string module;  // the first parts of a MODULE path; "" is the model itself
  RoleKind role = RoleKind::kParameter;
  int64_t peak_bytes = 0;   // the band's most bytes in one column
  int64_t byte_steps = 0;   // sum over columns of bytes x the column's program steps
  bool operator==(const StackBand&) const = default;
};

struct StackColumn {
  int32_t first_step = 0, last_step = 0;  // the program steps it covers
  int64_t event = 0;                      // the computation sampled
  int32_t program_step = 0;               // its program step
  int64_t memory = 0;                     // memory in use right after it
  std::vector<int64_t> bytes;             // per band, in the order of the bands
  bool operator==(const StackColumn&) const = default;
};

struct StackedMemory {
  std::vector<StackBand> bands;  // drawing order, bottom first; kOther last
  std::vector<StackColumn> columns;  // by program step; a step range no computation reached has none
  bool operator==(const StackedMemory&) const = default;
};

struct MemoryStack {
  size_t run = 0;  // the row of the report (set by the caller)
  int64_t budget = 0;
  Outcome outcome = Outcome::kPass;
  int32_t program_steps = 0;
  StackedMemory by_storage;
  std::optional<StackedMemory> by_module;  // a trace with MODULE keys only
};

// Replays `spec` twice: once to find each column's computation with the most
// memory in use, once to read the resident storages there. `max_columns` >= 1
// columns of equal program-step width (fewer for a short program);
// `max_bands` >= 2 bands per view, "other" included.
MemoryStack RecordMemoryStack(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                              int max_columns = 600, int max_bands = 8);

// The first `depth` parts of a MODULE path: "layer1" for ("layer1.0.conv1", 1).
std::string ModulePrefix(const std::string& module, int depth);
// The depth the view by module groups at: the deepest at which the prefixes
// of `modules` (those some operator names) are at most `max_groups`, and at least the smallest at which they
// are two or more (1 when they never are).
int ModuleGroupDepth(const std::vector<std::string>& modules, size_t max_groups);

}  // namespace dtr
