// `dtrcheck gen KIND [options] [-o FILE]`: writes a synthetic trace.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "traces/generators.h"
#include "traces/node_link.h"

namespace dtr::cli {

template <typename Options>
struct GenFlags {
  Options options;  // the generator's (traces/generators.h)
  std::string out;  // "" or "-": standard output
};

void AddGenChainFlags(CLI::App* cmd, GenFlags<ChainOptions>& f);
int RunGenChain(const GenFlags<ChainOptions>& f);
void AddGenResNetFlags(CLI::App* cmd, GenFlags<ResNetOptions>& f);
int RunGenResNet(const GenFlags<ResNetOptions>& f);
void AddGenRnnFlags(CLI::App* cmd, GenFlags<RnnOptions>& f);
int RunGenRnn(const GenFlags<RnnOptions>& f);

// `gen graph FILE.json`: a node-link graph (traces/node_link.h) as a trace.
struct GenGraphFlags {
  std::string graph;
  std::string out;
};
void AddGenGraphFlags(CLI::App* cmd, GenGraphFlags& f);
int RunGenGraph(const GenGraphFlags& f);

// `gen layered`: a random layered DAG as a trace, or with --json as the
// node-link graph itself.
struct GenLayeredFlags {
  LayeredGraphOptions options;
  std::string dialect = "moccasin";
  bool json = false;
  std::string out;
};
void AddGenLayeredFlags(CLI::App* cmd, GenLayeredFlags& f);
int RunGenLayered(const GenLayeredFlags& f);

struct GenDemoFlags {
  std::string out;
};
void AddGenDemoFlags(CLI::App* cmd, GenDemoFlags& f);
int RunGenDemo(const GenDemoFlags& f);

struct GenListFlags {};
void AddGenListFlags(CLI::App* cmd, GenListFlags& f);
int RunGenList(const GenListFlags& f);

}  // namespace dtr::cli
