// The report as JSON: the stable, machine-read form documented in
// docs/report_json.md. Adding a field is a compatible change; renaming or
// removing one, or changing its meaning, bumps kReportSchemaVersion.
#pragma once

#include <nlohmann/json.hpp>

#include "diagnose/report_model.h"

namespace dtr {

inline constexpr int kReportSchemaVersion = 3;

// `trace` is the trace the report was built from (it names tensors and
// operators).
nlohmann::ordered_json ReportJson(const Trace& trace, const BudgetReport& report);
// The report of one heuristic.
nlohmann::ordered_json ReportJson(const Trace& trace, const ReportModel& model);

}  // namespace dtr
