// scan, diff, blame, ablate: the instability analyses (diagnose/), rendered
// by reports/instability_report.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "api/front_door.h"
#include "cli/replay_flags.h"
#include "diagnose/counterfactual.h"

namespace dtr::cli {

struct ScanFlags {
  std::string trace;
  api::ScanRequest request;
  bool json = false;
  bool csv = false;
};
void AddScanFlags(CLI::App* cmd, ScanFlags& f);
int RunScan(const ScanFlags& f);

struct DiffFlags : ReplayFlags {
  std::string ratios;   // "A,B", or
  std::string budgets;  // "A,B" in bytes
};
void AddDiffFlags(CLI::App* cmd, DiffFlags& f);
int RunDiff(const DiffFlags& f);

struct BlameFlags : ReplayFlags {
  std::string ratio, against;
  BlameOptions options;
};
void AddBlameFlags(CLI::App* cmd, BlameFlags& f);
int RunBlame(const BlameFlags& f);

struct AblateFlags : ReplayFlags {
  std::string ratios;
  double cliff_factor = 1.5;
};
void AddAblateFlags(CLI::App* cmd, AblateFlags& f);
int RunAblate(const AblateFlags& f);

}  // namespace dtr::cli
