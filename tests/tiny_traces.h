// Random tiny traces in the real trace format, for tests that compare the
// proofs with exhaustive search. Every test that uses them prints the seed.
#pragma once

#include <cstdint>
#include <string>

#include "model/trace.h"

namespace dtr::testing {

// About `storages` storages: a couple of constants, CALLs with one to three
// arguments and one or two results (sometimes an alias), the odd MUTATE and
// COPY, releases along the way, and a few names left referenced at the end.
std::string RandomTinyTraceText(uint64_t seed, int storages = 8);
Trace RandomTinyTrace(uint64_t seed, int storages = 8);

}  // namespace dtr::testing
