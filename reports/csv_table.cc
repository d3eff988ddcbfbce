#include "reports/csv_table.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace dtr {

namespace {

using nlohmann::ordered_json;
using Cells = std::vector<std::pair<std::string, std::string>>;

void Flatten(const ordered_json& j, const std::string& prefix, Cells& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    const ordered_json& v = it.value();
    if (v.is_object())
      Flatten(v, name, out);
    else if (v.is_null())
      out.emplace_back(name, "");
    else if (v.is_string())
      out.emplace_back(name, v.get<std::string>());
    else
      out.emplace_back(name, v.dump());
  }
}

std::string Quote(const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string q = "\"";
  for (char c : cell) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace

void PrintCsvTable(std::ostream& out, const ordered_json& rows) {
  std::vector<Cells> cells(rows.size());
  std::vector<std::string> header;
  for (size_t r = 0; r < rows.size(); ++r) {
    Flatten(rows[r], "", cells[r]);
    for (const auto& [name, value] : cells[r])
      if (std::find(header.begin(), header.end(), name) == header.end()) header.push_back(name);
  }
  for (size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << Quote(header[c]);
  out << "\n";
  for (const Cells& row : cells) {
    for (size_t c = 0; c < header.size(); ++c) {
      auto it = std::find_if(row.begin(), row.end(),
                             [&](const auto& cell) { return cell.first == header[c]; });
      out << (c ? "," : "") << (it == row.end() ? "" : Quote(it->second));
    }
    out << "\n";
  }
}

}  // namespace dtr
