// `dtrcheck gen KIND [options] [-o FILE]`: writes a synthetic trace.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "traces/generators.h"

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

struct GenDemoFlags {
  std::string out;
};
void AddGenDemoFlags(CLI::App* cmd, GenDemoFlags& f);
int RunGenDemo(const GenDemoFlags& f);

struct GenListFlags {};
void AddGenListFlags(CLI::App* cmd, GenListFlags& f);
int RunGenList(const GenListFlags& f);

}  // namespace dtr::cli
