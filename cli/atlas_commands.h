// dtrcheck atlas: every budget interval of identical behaviour over a range.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "api/front_door.h"
#include "cli/replay_flags.h"

namespace dtr::cli {

struct AtlasFlags {
  std::string trace;
  api::AtlasRequest request;
  bool json = false;
  bool csv = false;
  bool all = false;
};
void AddAtlasFlags(CLI::App* cmd, AtlasFlags& f);
int RunAtlas(const AtlasFlags& f);

}  // namespace dtr::cli
