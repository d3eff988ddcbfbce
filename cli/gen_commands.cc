#include "cli/gen_commands.h"

#include <fmt/core.h>

#include <fstream>
#include <iostream>

#include "cli/flag_ranges.h"
#include "model/error.h"
#include "model/output_file.h"
#include "traces/demo.h"
#include "traces/manifest.h"

namespace dtr::cli {

namespace {

// Writes the whole text, or nothing (model/output_file.h).
void Emit(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  WriteFileAtomically(path, text);
}

void AddOutFlag(CLI::App* cmd, std::string& out) {
  cmd->add_option("-o,--out", out, "output file (default: standard output)")->type_name("FILE");
}

// An integer option of a generator, lo..hi, its default shown.
template <typename T>
void AddCount(CLI::App* cmd, const char* name, T& value, const char* help, int64_t lo, int64_t hi) {
  cmd->add_option(name, value, help)->capture_default_str()->check(IntegerIn(lo, hi));
}

}  // namespace

void AddGenChainFlags(CLI::App* cmd, GenFlags<ChainOptions>& f) {
  ChainOptions& o = f.options;
  AddCount(cmd, "--layers", o.layers, "number of layers N", 1, 1000000);
  AddCount(cmd, "--size", o.size, "bytes of every activation and gradient", 1, kMaxInt64);
  AddCount(cmd, "--compute", o.compute, "compute of a forward layer", 0, kMaxInt64);
  AddCount(cmd, "--backward-compute", o.backward_compute, "compute of a backward layer", 0,
           kMaxInt64);
  AddOutFlag(cmd, f.out);
}

int RunGenChain(const GenFlags<ChainOptions>& f) {
  Emit(GenerateChain(f.options), f.out);
  return 0;
}

void AddGenResNetFlags(CLI::App* cmd, GenFlags<ResNetOptions>& f) {
  ResNetOptions& o = f.options;
  AddCount(cmd, "--blocks", o.blocks, "residual blocks", 1, 1000000);
  AddCount(cmd, "--stages", o.stages,
           "stages (at most --blocks); each after the first halves the sizes", 1, 30);
  AddCount(cmd, "--size", o.size, "bytes of a block's input and output in the first stage", 1,
           kMaxInt64);
  AddCount(cmd, "--inner-size", o.inner_size, "bytes of a block's inner tensors in the first stage",
           1, kMaxInt64);
  AddCount(cmd, "--param-size", o.param_size, "bytes of each weight and weight gradient (0: none)",
           0, kMaxInt64);
  AddCount(cmd, "--compute", o.compute, "compute of a convolution or its backward", 0, kMaxInt64);
  AddCount(cmd, "--cheap-compute", o.cheap_compute, "compute of relu, add, pooling, loss", 0,
           kMaxInt64);
  AddOutFlag(cmd, f.out);
}

int RunGenResNet(const GenFlags<ResNetOptions>& f) {
  Emit(GenerateResNet(f.options), f.out);
  return 0;
}

void AddGenRnnFlags(CLI::App* cmd, GenFlags<RnnOptions>& f) {
  RnnOptions& o = f.options;
  AddCount(cmd, "--steps", o.steps, "unrolled time steps", 1, 1000000);
  AddCount(cmd, "--hidden-size", o.hidden_size, "bytes of a hidden state", 1, kMaxInt64);
  AddCount(cmd, "--input-size", o.input_size, "bytes of one step's input", 1, kMaxInt64);
  AddCount(cmd, "--param-size", o.param_size, "bytes of the weight and its gradient", 1, kMaxInt64);
  AddCount(cmd, "--compute", o.compute, "compute of the linear layer or its backward", 0,
           kMaxInt64);
  AddCount(cmd, "--cheap-compute", o.cheap_compute, "compute of tanh, add, loss", 0, kMaxInt64);
  AddOutFlag(cmd, f.out);
}

int RunGenRnn(const GenFlags<RnnOptions>& f) {
  Emit(GenerateRnn(f.options), f.out);
  return 0;
}

void AddGenGraphFlags(CLI::App* cmd, GenGraphFlags& f) {
  cmd->add_option("graph", f.graph,
                  "node-link JSON graph (Checkmate or Moccasin keys; docs/commands/gen.md)")
      ->required()
      ->type_name("FILE");
  AddOutFlag(cmd, f.out);
}

int RunGenGraph(const GenGraphFlags& f) {
  Emit(LoadNodeLinkGraphAsTrace(f.graph), f.out);
  return 0;
}

void AddGenLayeredFlags(CLI::App* cmd, GenLayeredFlags& f) {
  LayeredGraphOptions& o = f.options;
  AddCount(cmd, "--nodes", o.nodes, "nodes, the source and the sink included", 3, 100000);
  cmd->add_option("--seed", o.seed, "seed of the random graph")
      ->capture_default_str()
      ->check(AnyUnsigned64());
  cmd->add_option("--dialect", f.dialect,
                  "the keys of the --json graph: checkmate (cost_cpu, cost_ram) or moccasin "
                  "(duration, out_cost; default); the trace is the same")
      ->check(CLI::IsMember({"checkmate", "moccasin"}))
      ->type_name("DIALECT");
  cmd->add_flag("--json", f.json, "write the node-link JSON graph instead of its trace");
  AddOutFlag(cmd, f.out);
}

int RunGenLayered(const GenLayeredFlags& f) {
  LayeredGraphOptions o = f.options;
  o.dialect = f.dialect == "checkmate" ? GraphDialect::kCheckmate : GraphDialect::kMoccasin;
  std::string graph = GenerateLayeredGraph(o);
  Emit(f.json ? graph : NodeLinkGraphToTrace(graph, "gen layered"), f.out);
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
