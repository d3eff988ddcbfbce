// Random small traces in the real log format, for model-based tests and
// exhaustive checks. Deterministic in the seed; the text always parses.
#pragma once

#include <cstdint>
#include <string>

namespace dtr::testing {

struct RandomTraceOptions {
  int operators = 12;    // CALL and MUTATE instructions after the constants
  int constants = 2;
  int max_outputs = 2;   // results per CALL
  int max_args = 3;
  bool aliases = true;   // some results alias an argument
  bool mutations = true;
  bool copies = true;    // COPY and COPY_FROM
};

std::string RandomTrace(uint64_t seed, const RandomTraceOptions& options = {});

}  // namespace dtr::testing
