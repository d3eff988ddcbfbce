// info, replay, sweep: parse a trace, replay it under one budget or many.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "api/front_door.h"
#include "cli/replay_flags.h"

namespace dtr::cli {

struct InfoFlags {
  std::string trace;
  bool json = false;
};
void AddInfoFlags(CLI::App* cmd, InfoFlags& f);
int RunInfo(const InfoFlags& f);

struct ReplayCommandFlags {
  std::string trace;
  api::ReplayRequest request;
  bool json = false;
  std::string emit_script;
  int storages = -1;  // -1: no per-storage list
  std::string record;
  bool fail_on_oom = false;  // exit status 1 unless the run passes
};
void AddReplayCommandFlags(CLI::App* cmd, ReplayCommandFlags& f);
int RunReplay(const ReplayCommandFlags& f);

struct SweepFlags {
  std::string trace;
  api::SweepRequest request;
  bool json = false;
  bool csv = false;
};
void AddSweepFlags(CLI::App* cmd, SweepFlags& f);
int RunSweep(const SweepFlags& f);

}  // namespace dtr::cli
