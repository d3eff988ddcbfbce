// Renders a budget atlas (checker/drivers/budget_atlas.h): JSON (docs/atlas_json.md),
// CSV (one row per interval) and a text table with the summary.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "checker/drivers/budget_atlas.h"
#include "reports/run_report.h"

namespace dtr {

// The ratio at which a budget in bytes begins: budget / baseline memory.
double AtlasRatio(const TraceSummary& summary, int64_t bytes);

// The fields of one interval as `atlas --json` writes them (without its band).
nlohmann::ordered_json AtlasIntervalJson(const TraceSummary& summary, const AtlasInterval& interval);

nlohmann::ordered_json AtlasJson(const TraceSummary& summary, const RunSpec& spec, const BudgetAtlas& atlas);

// Header line, then one line per interval; columns as the JSON interval fields.
void PrintAtlasCsv(std::ostream& out, const TraceSummary& summary, const BudgetAtlas& atlas);

// "1,000 replays or 1,000,000,000 heuristic evaluations (--max-runs,
// --max-evals)", either part alone; "none" without a cap. flag_prefix "--atlas-" for the report's
// flags.
std::string AtlasCapText(const AtlasCap& cap, const std::string& flag_prefix = "--");

// The intervals (if there are at most `max_rows`; otherwise the bands of
// visibly identical intervals if those fit; otherwise neither, with a note),
// then the summary and every hole. A stopped walk (asked_hi) says so first.
void PrintAtlasText(std::ostream& out, const TraceSummary& summary, const RunSpec& spec, const BudgetAtlas& atlas,
                    size_t max_rows);

}  // namespace dtr
