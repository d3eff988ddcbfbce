// The random trace generator (tests/random_trace.h): every seed parses, and
// the tiny mode makes about the storages asked for.
#include "tests/random_trace.h"

#include <doctest/doctest.h>

namespace dtr::testing {
namespace {

TEST_CASE("random traces: every seed parses, in both modes") {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    INFO("seed ", seed);
    CHECK_NOTHROW(RandomTrace(seed, VariedOptions(seed)));
    const int storages = 4 + static_cast<int>(seed % 8);
    Trace tiny = RandomTinyTrace(seed, storages);
    // It stops at the first operator that reaches the count; one CALL makes
    // at most two storages.
    CHECK(static_cast<int>(tiny.storages.size()) >= storages);
    CHECK(static_cast<int>(tiny.storages.size()) <= storages + 1);
  }
}

TEST_CASE("random traces: the same seed gives the same text") {
  CHECK(RandomTraceText(7) == RandomTraceText(7));
  CHECK(RandomTraceText(7) != RandomTraceText(8));
}

}  // namespace
}  // namespace dtr::testing
