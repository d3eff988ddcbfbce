// Renders the proof side of dtrcheck: the remat frontier, schedule checks,
// OOM classifications (explain / prove) and bounds, as JSON
// (docs/proof_json.md) and as text.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "checker/drivers/ratio_grid.h"
#include "checker/engine/replay.h"
#include "checker/proofs/schedule_checker.h"
#include "diagnose/feasibility_bounds.h"
#include "diagnose/oom_classification.h"
#include "diagnose/remat_frontier.h"
#include "model/trace.h"

namespace dtr {

// What every proof report starts with.
struct ProofHeader {
  std::string log;  // trace file name
  Baseline baseline;
  std::string heuristic;  // empty when no heuristic ran (check, prove)
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  std::optional<Ratio> ratio;
  int64_t budget = 0;
};

nlohmann::ordered_json FrontierJson(const Trace& trace, const ProofHeader& header,
                                    const RematFrontier& f);
// FrontierJson without the header: the frontier's own fields (what the budget
// report writes for each OOM state).
nlohmann::ordered_json FrontierFieldsJson(const Trace& trace, const RematFrontier& f);
void PrintFrontierText(std::ostream& out, const Trace& trace, const ProofHeader& header,
                       const RematFrontier& f);

// script_path: where the script came from (for the report).
nlohmann::ordered_json ScheduleCheckJson(const Trace& trace, const ProofHeader& header,
                                         const std::string& script_path, size_t entries,
                                         const ScheduleCheck& check);
void PrintScheduleCheckText(std::ostream& out, const Trace& trace, const ProofHeader& header,
                            const std::string& script_path, size_t entries,
                            const ScheduleCheck& check);

// kind: "explain" or "prove".
nlohmann::ordered_json ClassificationJson(const Trace& trace, const ProofHeader& header,
                                          const std::string& kind, const Classification& c);
// ClassificationJson without the header and the frontier: the verdict, its
// certificate, the bounds and what was tried (what the budget report writes
// for each OOM budget).
nlohmann::ordered_json VerdictFieldsJson(const Trace& trace, const Baseline& baseline,
                                         const Classification& c);
// A certificate as data: `type` (CertificateKindName), `budget`,
// `checked_by`, `checked` (Certificate::Holds), then the script, the bound or
// the window.
nlohmann::ordered_json CertificateJson(const Trace& trace, const Certificate& c);
// The certificate as the lines explain prints (indented by two spaces, each
// ending in a newline).
void PrintCertificateText(std::ostream& out, const Trace& trace, const Certificate& c);
// The same lines, trimmed and joined with "; ": one table cell.
std::string CertificateLine(const Trace& trace, const Certificate& c);
// For a verdict without a certificate: what was tried and failed, one line.
std::string UndeterminedLine(const Classification& c);
void PrintClassificationText(std::ostream& out, const Trace& trace, const ProofHeader& header,
                             const Classification& c, bool verbose);
// The part of PrintClassificationText after the header or frontier: the
// verdict, its certificate, the static bound, notes (and with `verbose`
// every attempt). The budget report shows these lines for each OOM budget.
void PrintVerdictText(std::ostream& out, const Trace& trace, const ProofHeader& header,
                      const Classification& c, bool verbose);

// With the trace, the lower bound's argument names its operators and storages.
nlohmann::ordered_json BoundsJson(const ProofHeader& header, const BoundsReport& r,
                                  const Trace* trace = nullptr);
void PrintBoundsText(std::ostream& out, const ProofHeader& header, const BoundsReport& r,
                     const Trace* trace = nullptr);

}  // namespace dtr
