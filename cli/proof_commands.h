// frontier, check, explain, prove, bounds: the proof side of dtrcheck.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "api/front_door.h"
#include "cli/replay_flags.h"

namespace dtr::cli {

struct FrontierFlags {
  std::string trace;
  api::FrontierRequest request;
  bool json = false;
};
void AddFrontierFlags(CLI::App* cmd, FrontierFlags& f);
int RunFrontier(const FrontierFlags& f);

struct CheckFlags {
  std::string trace;
  api::CheckRequest request;
  bool json = false;
};
void AddCheckFlags(CLI::App* cmd, CheckFlags& f);
int RunCheck(const CheckFlags& f);

// explain and prove: the witness search and Z3.
struct ProofFlags {
  std::string trace;
  api::ProofRequest request;
  bool json = false;
  bool verbose = false;
  std::string expect;  // "": any verdict exits 0; else exit status 1 for another verdict
};
void AddExplainFlags(CLI::App* cmd, ProofFlags& f);
int RunExplain(const ProofFlags& f);
void AddProveFlags(CLI::App* cmd, ProofFlags& f);
int RunProve(const ProofFlags& f);

struct BoundsFlags {
  std::string trace;
  api::BoundsRequest request;
  bool json = false;
  bool csv = false;
};
void AddBoundsFlags(CLI::App* cmd, BoundsFlags& f);
int RunBounds(const BoundsFlags& f);

}  // namespace dtr::cli
