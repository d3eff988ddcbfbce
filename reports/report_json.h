// The report as JSON: the stable, machine-read form documented in
// docs/report_json.md. Adding a field is a compatible change; renaming or
// removing one, or changing its meaning, bumps kReportSchemaVersion.
#pragma once

#include <nlohmann/json.hpp>

#include "reports/report_model.h"

namespace dtr {

inline constexpr int kReportSchemaVersion = 1;

nlohmann::ordered_json ReportJson(const ReportModel& model);

}  // namespace dtr
