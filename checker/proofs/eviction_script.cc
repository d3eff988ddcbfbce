#include "checker/proofs/eviction_script.h"

#include <fmt/core.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "model/attribution.h"
#include "model/echo.h"
#include "model/error.h"
#include "model/output_file.h"

namespace dtr {

EvictionScript ParseEvictionScript(std::istream& in, const std::string& source,
                                   const Trace& trace) {
  std::unordered_map<std::string_view, StorageId> storage_of;
  storage_of.reserve(trace.tensors.size());
  for (const Tensor& t : trace.tensors) storage_of.emplace(t.name, t.storage);
  EvictionScript script;
  std::vector<int> entry_line;
  std::string text;
  int line = 0;
  auto fail = [&](const std::string& message) {
    throw InputError(fmt::format("{}:{}: {}", source, line, message));
  };
  while (std::getline(in, text)) {
    ++line;
    if (size_t hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream fields(text);
    std::string event_text, name, extra;
    if (!(fields >> event_text)) continue;  // blank or comment
    if (!(fields >> name) || (fields >> extra))
      fail(fmt::format("expected 'EVENT STORAGE', got '{}'", Echo(text)));
    int64_t event = 0;
    const char* end = event_text.data() + event_text.size();
    auto [stop, ec] = std::from_chars(event_text.data(), end, event);
    if (!std::isdigit(static_cast<unsigned char>(event_text[0])) || stop != end)
      fail(fmt::format("EVENT must be a non-negative integer, got '{}'", Echo(event_text)));
    if (ec == std::errc::result_out_of_range)
      fail(fmt::format("EVENT {} is too large (at most {})", Echo(event_text), INT64_MAX));
    auto it = storage_of.find(name);
    if (it == storage_of.end())
      fail(fmt::format("'{}' is not a tensor of {}", Echo(name), trace.source));
    if (!script.entries.empty() && event < script.entries.back().event)
      fail(fmt::format("event {} comes after event {} (line {}); entries must be sorted by event",
                       event, script.entries.back().event, entry_line.back()));
    script.entries.push_back({event, it->second});
    entry_line.push_back(line);
  }
  if (in.bad()) throw InputError(SystemErrorMessage(source, "read error"));
  return script;
}

EvictionScript ParseEvictionScriptString(std::string_view text, const std::string& source,
                                         const Trace& trace) {
  std::istringstream in{std::string(text)};
  return ParseEvictionScript(in, source, trace);
}

EvictionScript LoadEvictionScript(const std::string& path, const Trace& trace) {
  std::ifstream in(path);
  if (!in) throw InputError(SystemErrorMessage(path, "cannot open the eviction script"));
  return ParseEvictionScript(in, path, trace);
}

void WriteEvictionScript(std::ostream& out, const Trace& trace, const EvictionScript& script,
                         const std::vector<std::string>& comment) {
  for (const std::string& c : comment) out << "# " << c << "\n";
  for (const ScriptedEviction& e : script.entries) {
    out << e.event << " " << trace.tensors[trace.storages[e.storage].root].name;
    // A captured trace says where the storage comes from: a comment to the
    // end of the line, which the reader skips.
    if (std::string origin = StorageOrigin(trace, e.storage); !origin.empty()) out << "  # " << origin;
    out << "\n";
  }
}

void SaveEvictionScript(const std::string& path, const Trace& trace, const EvictionScript& script,
                        const std::vector<std::string>& comment) {
  std::ostringstream text;
  WriteEvictionScript(text, trace, script, comment);
  WriteFileAtomically(path, text.str());
}

namespace {

class ScriptRecorder : public ReplayObserver {
 public:
  explicit ScriptRecorder(EvictionScript& script) : script_(script) {}
  Flow OnDecision(const DecisionPoint& d) override {
    script_.entries.push_back({d.event, d.chosen});
    return Flow::kContinue;
  }
  bool WantsScores() const override { return false; }

 private:
  EvictionScript& script_;
};

}  // namespace

ScriptedRun ScriptOfRun(const Trace& trace, const ReplayConfig& config) {
  ScriptedRun out;
  EvictionScript decisions;
  ScriptRecorder recorder(decisions);
  std::optional<TeeObserver> tee;
  ReplayConfig c = config;
  c.observer = &recorder;
  if (config.observer) c.observer = &tee.emplace(*config.observer, recorder);
  out.run = Replay(trace, c);
  if (!config.script) {
    out.script = std::move(decisions);
    return out;
  }
  // A scripted start with a heuristic rest: at each event the scripted
  // entries were applied before the heuristic decided.
  int64_t reached = out.run.oom ? out.run.oom->event : out.run.events;
  size_t d = 0;
  for (const ScriptedEviction& e : *config.script) {
    if (e.event > reached) break;
    while (d < decisions.entries.size() && decisions.entries[d].event < e.event)
      out.script.entries.push_back(decisions.entries[d++]);
    out.script.entries.push_back(e);
  }
  while (d < decisions.entries.size()) out.script.entries.push_back(decisions.entries[d++]);
  return out;
}

Engine ScriptedStateBeforeStep(const Trace& trace, RuntimeKind runtime, const EvictionScript& script,
                               int32_t step) {
  EngineOptions options;
  options.runtime = runtime;
  Engine engine(trace, options);
  ScriptPolicy policy(script.entries, nullptr);
  while (engine.Advance() && engine.program_step() < step) {
    if (!policy.Prepare(engine))
      throw Error(fmt::format("script entry {} (event {}): {}", policy.failure()->entry, policy.failure()->event,
                              policy.failure()->reason));
    engine.Compute();
  }
  return engine;
}

}  // namespace dtr
