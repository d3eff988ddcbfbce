// dtrcheck atlas: every budget interval of identical behaviour over a range.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/replay_flags.h"

namespace dtr::cli {

struct AtlasFlags : ReplayFlags {
  std::string ratios;
  std::string budgets;
  std::string checkpoint;
  bool csv = false;
  bool all = false;
};
void AddAtlasFlags(CLI::App* cmd, AtlasFlags& f);
int RunAtlas(const AtlasFlags& f);

}  // namespace dtr::cli
