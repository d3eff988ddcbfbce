// scan, diff, blame, ablate: the instability analyses (diagnose/), rendered
// by reports/instability_report.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "api/front_door.h"
#include "cli/replay_flags.h"

namespace dtr::cli {

struct ScanFlags {
  std::string trace;
  api::ScanRequest request;
  bool json = false;
  bool csv = false;
};
void AddScanFlags(CLI::App* cmd, ScanFlags& f);
int RunScan(const ScanFlags& f);

// The flags of diff, blame and ablate: the trace, the request, --json.
template <typename Request>
struct RequestFlags {
  std::string trace;
  Request request;
  bool json = false;
};

using DiffFlags = RequestFlags<api::DiffRequest>;
void AddDiffFlags(CLI::App* cmd, DiffFlags& f);
int RunDiff(const DiffFlags& f);

using BlameFlags = RequestFlags<api::BlameRequest>;
void AddBlameFlags(CLI::App* cmd, BlameFlags& f);
int RunBlame(const BlameFlags& f);

using AblateFlags = RequestFlags<api::AblateRequest>;
void AddAblateFlags(CLI::App* cmd, AblateFlags& f);
int RunAblate(const AblateFlags& f);

}  // namespace dtr::cli
