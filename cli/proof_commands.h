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

// A trace and a budget given as --ratio or --budget, a RuntimeV2 runtime, --json.
struct ProofBudgetFlags : ReplayFlags, BudgetFlags {};

struct FrontierFlags : ProofBudgetFlags {
  int64_t at = -1;  // -1: the run's OOM
};
void AddFrontierFlags(CLI::App* cmd, FrontierFlags& f);
int RunFrontier(const FrontierFlags& f);

struct CheckFlags : ProofBudgetFlags {
  std::string script;
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

struct BoundsFlags : ReplayFlags {
  std::string grid = "0.01:1:0.01";
  std::string fine_step = "0.001";
  int32_t windows = 3;
  int32_t window_ops = 6;
  double timeout = 10;
  uint32_t work_limit = 0;
  double search_seconds = 60;
  std::string walk = "gallop";
  double plan_seconds = std::numeric_limits<double>::infinity();  // checkpoint plans (0: none)
  int64_t plan_work = 500'000'000;  // computations the plans follow (0: no limit)
  double plan_max_overhead = 0;  // 0: any
  bool plans_only = false;
  std::string save_script;
  bool csv = false;
  double cut_seconds = std::numeric_limits<double>::infinity();
  std::optional<std::string> store;
};
void AddBoundsFlags(CLI::App* cmd, BoundsFlags& f);
int RunBounds(const BoundsFlags& f);

}  // namespace dtr::cli
