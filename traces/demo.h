// The embedded demo trace: a small generated residual network whose DTR
// budget curve has a feasibility inversion (docs/demo.md tells how
// it was found and what it shows).
#pragma once

#include <string>

#include "traces/generators.h"

namespace dtr {

// Four residual blocks whose inner tensors are half the size of their input
// and output (a bottleneck), no weights. Under DTR on the default runtime it
// passes at ratios 0.46 to 0.49, runs out of memory at 0.50 to 0.54, and
// passes again from 0.55: at the start of the backward pass a recursive
// rematerialization walks back through the blocks' outputs, four frames deep,
// and their locks leave no room for the next output. The evictions of the
// run at 0.49 fit the 0.50 budget, so the OOM is the policy's fault
// (tests/demo_trace_test.cc). The values are fixed here, not taken from
// ResNetOptions' defaults, so that the demo never changes when they do.
ResNetOptions DemoOptions();
std::string GenerateDemo();
// The ratio grid the demo report uses by default; it contains the inversion.
std::string DemoRatios();

inline constexpr const char* kDemoTraceName = "demo";
inline constexpr const char* kDemoSource =
    "embedded demo trace (dtrcheck gen demo = gen resnet --blocks 4 --stages 1 --size 1048576 "
    "--inner-size "
    "524288 --param-size 0 --compute 1000 --cheap-compute 100)";

}  // namespace dtr
