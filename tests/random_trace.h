// Random small traces in the real log format, for model-based tests and
// exhaustive checks. Deterministic in the seed; the text always parses.
// Every test that uses them prints the seed.
#pragma once

#include <cstdint>
#include <string>

#include "model/trace.h"

namespace dtr::testing {

struct RandomTraceOptions {
  int operators = 12;  // CALL and MUTATE instructions after the constants
  // > 0: ignore `operators` and stop once this many storages exist (constants,
  // CALL results that do not alias, MUTATE results): the size that bounds an
  // exhaustive search.
  int storages = 0;
  int constants = 2;    // 0: the trace starts with a CALL without arguments
  int max_outputs = 2;  // results per CALL
  int max_args = 3;
  bool aliases = true;  // some results alias an argument
  bool mutations = true;
  bool copies = true;  // COPY and COPY_FROM
};

// Options whose size varies with the seed: 6 to 20 operators, one to three
// results per CALL.
RandomTraceOptions VariedOptions(uint64_t seed);

std::string RandomTraceText(uint64_t seed, const RandomTraceOptions& options = {});
// Parsed; the source is named "random-SEED.log".
Trace RandomTrace(uint64_t seed, const RandomTraceOptions& options = {});

// About `storages` storages, for comparisons with exhaustive search.
Trace RandomTinyTrace(uint64_t seed, int storages = 8);

// A chain whose frames lock: step i makes a_i from a constant and h_i =
// f_i(a_i, h_{i-1}) (or h_{i-1} first), then releases a_i; the backward pass
// needs each h_i again, in reverse. Recomputing h_i from h_j holds one a per
// pending frame, so a schedule keeps checkpoints spaced by how many frames
// the budget allows, as an RNN's does: where the checkpoints argument bites.
// The sizes and steps come from the seed (3 to 9 steps), or from the
// options when steps > 0; with swaps, each two-argument call may take its
// arguments in either order (from the seed).
struct LockChainOptions {
  int steps = 0;
  int a = 0, h = 0, g = 0;  // sizes of a_i, h_i and the gradients
  bool swaps = true;
};
std::string LockChainText(uint64_t seed, const LockChainOptions& options = {});

}  // namespace dtr::testing
