#include "cli/gen_commands.h"

#include <fmt/core.h>

#include <fstream>
#include <iostream>

#include "model/error.h"
#include "traces/demo.h"
#include "traces/manifest.h"

namespace dtr::cli {

namespace {

// Writes the whole text, or nothing: the file is opened only once the trace exists.
void Emit(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(fmt::format("{}: cannot open for writing", path));
  out << text;
  out.close();
  if (!out) throw Error(fmt::format("{}: write failed", path));
}

void AddOutFlag(CLI::App* cmd, std::string& out) {
  cmd->add_option("-o,--out", out, "output file (default: standard output)");
}

}  // namespace

void AddGenChainFlags(CLI::App* cmd, GenFlags<ChainOptions>& f) {
  ChainOptions& o = f.options;
  cmd->add_option("--layers", o.layers, "number of layers N")->capture_default_str();
  cmd->add_option("--size", o.size, "bytes of every activation and gradient")
      ->capture_default_str();
  cmd->add_option("--compute", o.compute, "compute of a forward layer")->capture_default_str();
  cmd->add_option("--backward-compute", o.backward_compute, "compute of a backward layer")
      ->capture_default_str();
  AddOutFlag(cmd, f.out);
}

int RunGenChain(const GenFlags<ChainOptions>& f) {
  Emit(GenerateChain(f.options), f.out);
  return 0;
}

void AddGenResNetFlags(CLI::App* cmd, GenFlags<ResNetOptions>& f) {
  ResNetOptions& o = f.options;
  cmd->add_option("--blocks", o.blocks, "residual blocks")->capture_default_str();
  cmd->add_option("--stages", o.stages, "stages; each after the first halves the sizes")
      ->capture_default_str();
  cmd->add_option("--size", o.size, "bytes of a block's input and output in the first stage")
      ->capture_default_str();
  cmd->add_option("--inner-size", o.inner_size,
                  "bytes of a block's inner tensors in the first stage")
      ->capture_default_str();
  cmd->add_option("--param-size", o.param_size,
                  "bytes of each weight and weight gradient (0: none)")
      ->capture_default_str();
  cmd->add_option("--compute", o.compute, "compute of a convolution or its backward")
      ->capture_default_str();
  cmd->add_option("--cheap-compute", o.cheap_compute, "compute of relu, add, pooling, loss")
      ->capture_default_str();
  AddOutFlag(cmd, f.out);
}

int RunGenResNet(const GenFlags<ResNetOptions>& f) {
  Emit(GenerateResNet(f.options), f.out);
  return 0;
}

void AddGenRnnFlags(CLI::App* cmd, GenFlags<RnnOptions>& f) {
  RnnOptions& o = f.options;
  cmd->add_option("--steps", o.steps, "unrolled time steps")->capture_default_str();
  cmd->add_option("--hidden-size", o.hidden_size, "bytes of a hidden state")->capture_default_str();
  cmd->add_option("--input-size", o.input_size, "bytes of one step's input")->capture_default_str();
  cmd->add_option("--param-size", o.param_size, "bytes of the weight and its gradient")
      ->capture_default_str();
  cmd->add_option("--compute", o.compute, "compute of the linear layer or its backward")
      ->capture_default_str();
  cmd->add_option("--cheap-compute", o.cheap_compute, "compute of tanh, add, loss")
      ->capture_default_str();
  AddOutFlag(cmd, f.out);
}

int RunGenRnn(const GenFlags<RnnOptions>& f) {
  Emit(GenerateRnn(f.options), f.out);
  return 0;
}

void AddGenDemoFlags(CLI::App* cmd, GenDemoFlags& f) { AddOutFlag(cmd, f.out); }

int RunGenDemo(const GenDemoFlags& f) {
  Emit(GenerateDemo(), f.out);
  return 0;
}

void AddGenListFlags(CLI::App*, GenListFlags&) {}

int RunGenList(const GenListFlags&) {
  fmt::print("generators:\n");
  for (const GeneratorEntry& g : TraceGenerators())
    fmt::print("  {:<8} {}\n           e.g. {}\n", g.name, g.summary, g.example);
  fmt::print("public traces (dtr-prototype simrd/logs.zip; read in place, never copied):\n");
  for (const PublicTraceEntry& t : PublicTraces())
    fmt::print("  {:<15} {:<18} {}\n", t.name, t.title, t.description);
  return 0;
}

}  // namespace dtr::cli
