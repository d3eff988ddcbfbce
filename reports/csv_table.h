// A table of JSON objects as CSV (`--csv` of sweep, scan, bounds): the same
// field names and numbers as the command's --json, one row per object.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace dtr {

// The header lists every field in the order it first appears across the rows;
// nested objects are flattened with dotted names ("oom.request"). Absent and
// null fields are empty cells; numbers are written as JSON writes them;
// arrays as their JSON text; a cell holding a comma, quote or line break is
// quoted, doubling its quotes (RFC 4180).
// `rows` is a JSON array of objects.
void PrintCsvTable(std::ostream& out, const nlohmann::ordered_json& rows);

}  // namespace dtr
