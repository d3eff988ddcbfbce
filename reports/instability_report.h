// Renders the instability analyses (scan, diff, blame, ablate) as plain text
// for people and as one JSON object for programs (docs/instability_json.md).
// Storages are named by their root tensor, ratios by the decimal text the
// user typed.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "diagnose/ablation.h"
#include "diagnose/counterfactual.h"
#include "diagnose/divergence.h"
#include "diagnose/instability_scan.h"
#include "reports/run_report.h"

namespace dtr {

nlohmann::ordered_json ScanJson(const TraceSummary& summary, const ScanResult& scan);
// The parts of ScanJson the budget report writes too, so that both name the
// same things the same way: {regimes, cliffs, inversions} of a curve, and
// the list of exact inversions of an atlas.
nlohmann::ordered_json CurveAnalysisJson(const ScanAnalysis& analysis,
                                         const std::vector<ScanPoint>& points);
nlohmann::ordered_json ExactInversionsJson(const TraceSummary& summary, const BudgetAtlas& atlas,
                                           const std::vector<ExactInversion>& inversions);
void PrintScanText(std::ostream& out, const TraceSummary& summary, const ScanResult& scan);

nlohmann::ordered_json DiffJson(const TraceSummary& summary, const Trace& trace,
                                const RunComparison& cmp);
// DiffJson without the header: the comparison's own fields.
nlohmann::ordered_json ComparisonJson(const Trace& trace, const RunComparison& cmp);
// One line for people: the first divergence, what differs after it and why.
std::string DivergenceSummary(const Trace& trace, const RunComparison& cmp);
void PrintDiffText(std::ostream& out, const TraceSummary& summary, const Trace& trace,
                   const RunComparison& cmp);

nlohmann::ordered_json BlameJson(const TraceSummary& summary, const Trace& trace,
                                 const BlameResult& blame);
void PrintBlameText(std::ostream& out, const TraceSummary& summary, const Trace& trace,
                    const BlameResult& blame);

nlohmann::ordered_json AblateJson(const TraceSummary& summary, const AblationResult& result);
void PrintAblateText(std::ostream& out, const TraceSummary& summary, const AblationResult& result);

}  // namespace dtr
