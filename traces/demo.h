// The embedded demo trace: a small generated residual network whose DTR
// budget curve has a feasibility inversion (docs/readme/reports.md tells how
// it was found and what it shows).
#pragma once

#include <string>

#include "traces/generators.h"

namespace dtr {

// Four residual blocks whose inner tensors are half the size of their input
// and output (a bottleneck), no weights. Under DTR on the default runtime it
// passes at ratios 0.46 to 0.49, runs out of memory at 0.50 to 0.54, and
// passes again from 0.55: a deep recursive rematerialization during the
// backward pass locks the whole remaining chain while one more block is
// needed. The values are fixed here, not taken from ResNetOptions' defaults,
// so that the demo never changes when the defaults do.
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
