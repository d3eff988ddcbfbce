#include "traces/demo.h"

namespace dtr {

ResNetOptions DemoOptions() {
  ResNetOptions o;
  o.blocks = 4;
  o.stages = 1;
  o.size = 1048576;
  o.inner_size = 524288;
  o.param_size = 0;
  o.compute = 1000;
  o.cheap_compute = 100;
  return o;
}

std::string GenerateDemo() { return GenerateResNet(DemoOptions()); }

std::string DemoRatios() { return "0.3:1.0:0.01"; }

}  // namespace dtr
