// `dtrcheck gen KIND [options] [-o FILE]`: writes a synthetic trace.
#include <fmt/core.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "model/error.h"
#include "model/output_file.h"
#include "traces/demo.h"
#include "traces/generators.h"
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

template <typename Options>
CLI::App* AddGenerator(CLI::App* gen, Actions& actions, const char* name, const char* help,
                       std::string (*generate)(const Options&),
                       void (*add_flags)(CLI::App*, Options&)) {
  struct Flags {
    Options options;
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = gen->add_subcommand(name, help);
  add_flags(cmd, f->options);
  cmd->add_option("-o,--out", f->out, "output file (default: standard output)");
  cmd->callback([f, generate, &actions] {
    actions.push_back([f, generate] {
      Emit(generate(f->options), f->out);
      return 0;
    });
  });
  return cmd;
}

void ChainFlags(CLI::App* cmd, ChainOptions& o) {
  cmd->add_option("--layers", o.layers, "number of layers N")->capture_default_str();
  cmd->add_option("--size", o.size, "bytes of every activation and gradient")
      ->capture_default_str();
  cmd->add_option("--compute", o.compute, "compute of a forward layer")->capture_default_str();
  cmd->add_option("--backward-compute", o.backward_compute, "compute of a backward layer")
      ->capture_default_str();
}

void ResNetFlags(CLI::App* cmd, ResNetOptions& o) {
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
}

void RnnFlags(CLI::App* cmd, RnnOptions& o) {
  cmd->add_option("--steps", o.steps, "unrolled time steps")->capture_default_str();
  cmd->add_option("--hidden-size", o.hidden_size, "bytes of a hidden state")->capture_default_str();
  cmd->add_option("--input-size", o.input_size, "bytes of one step's input")->capture_default_str();
  cmd->add_option("--param-size", o.param_size, "bytes of the weight and its gradient")
      ->capture_default_str();
  cmd->add_option("--compute", o.compute, "compute of the linear layer or its backward")
      ->capture_default_str();
  cmd->add_option("--cheap-compute", o.cheap_compute, "compute of tanh, add, loss")
      ->capture_default_str();
}

}  // namespace

void RegisterGenCommands(CLI::App& app, Actions& actions) {
  CLI::App* gen =
      app.add_subcommand("gen", "write a synthetic trace (deterministic) in the DTR log format");
  gen->require_subcommand(1);
  AddGenerator<ChainOptions>(gen, actions, "chain", "the DTR paper's uniform linear network",
                             GenerateChain, ChainFlags);
  AddGenerator<ResNetOptions>(gen, actions, "resnet", "a residual network in stages",
                              GenerateResNet, ResNetFlags);
  AddGenerator<RnnOptions>(gen, actions, "rnn", "an unrolled recurrent network", GenerateRnn,
                           RnnFlags);
  {
    auto out = std::make_shared<std::string>();
    CLI::App* cmd =
        gen->add_subcommand("demo", "the embedded demo trace (see docs/readme/reports.md)");
    cmd->add_option("-o,--out", *out, "output file (default: standard output)");
    cmd->callback([out, &actions] {
      actions.push_back([out] {
        Emit(GenerateDemo(), *out);
        return 0;
      });
    });
  }
  {
    CLI::App* cmd =
        gen->add_subcommand("list", "list the generators and the known public trace names");
    cmd->callback([&actions] {
      actions.push_back([] {
        fmt::print("generators:\n");
        for (const GeneratorEntry& g : TraceGenerators())
          fmt::print("  {:<8} {}\n           e.g. {}\n", g.name, g.summary, g.example);
        fmt::print("public traces (dtr-prototype simrd/logs.zip; read in place, never copied):\n");
        for (const PublicTraceEntry& t : PublicTraces())
          fmt::print("  {:<15} {:<18} {}\n", t.name, t.title, t.description);
        return 0;
      });
    });
  }
}

}  // namespace dtr::cli
