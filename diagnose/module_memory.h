// Memory and compute by module of a captured trace (docs/trace_format.md,
// "Attribution keys"): for each MODULE, the bytes of the storages its
// operators allocate (aliases allocate nothing), and their compute, apart
// for the forward and the backward. What a module's forward allocates is
// what keeping its activations costs, and what checkpointing it would trade
// against recomputing that forward.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace dtr {

struct ModuleMemory {
  std::string module;  // the MODULE value; "" is the model itself
  int32_t forward_ops = 0, backward_ops = 0;
  int64_t forward_bytes = 0, backward_bytes = 0;
  int64_t forward_compute = 0, backward_compute = 0;
};

// One row per module that some operator names, by forward bytes, largest
// first (equal: the module met first); nullopt for a trace without MODULE keys.
std::optional<std::vector<ModuleMemory>> MemoryByModule(const Trace& trace);

}  // namespace dtr
