// What traces dtrcheck knows by name: its synthetic generators, and the
// public DTR execution logs of the dtr-prototype repository (simrd/logs.zip),
// which are read in place from a directory the user gives and never copied.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dtr {

struct GeneratorEntry {
  std::string_view name;     // `dtrcheck gen NAME`
  std::string_view summary;  // one line
  std::string_view example;  // a command line
};

struct PublicTraceEntry {
  std::string_view name;         // short name, also the file name's prefix before '-'
  std::string_view title;        // as in the logs' manifest.json
  std::string_view description;  // input shape or model size, from the same manifest
};

const std::vector<GeneratorEntry>& TraceGenerators();
const std::vector<PublicTraceEntry>& PublicTraces();

// The path of public trace `name` in `dir`: the one file named "NAME-*.log".
// Throws Error if `name` is unknown or the directory has no such file.
std::string FindPublicTrace(const std::string& dir, std::string_view name);

}  // namespace dtr
