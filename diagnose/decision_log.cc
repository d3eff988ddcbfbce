#include "diagnose/decision_log.h"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "model/attribution.h"
#include "model/error.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

ordered_json TermsJson(const ScoreTerms& t) {
  return ordered_json::array({t.cost, t.size, t.staleness});
}

const std::string& StorageName(const Trace& trace, StorageId s) {
  return trace.tensors[trace.storages[s].root].name;
}

}  // namespace

// Where the trace says the storage comes from (model/attribution.h), under
// `key`; nothing for a trace without attribution keys, whose lines stay as
// they were.
void AddStorageOrigin(ordered_json& j, const Trace& trace, StorageId s, const char* key) {
  if (std::string origin = StorageOrigin(trace, s); !origin.empty()) j[key] = std::move(origin);
}

ordered_json ScoreJson(double score) {
  if (std::isinf(score)) return score > 0 ? "inf" : "-inf";
  return score;
}

ordered_json DecisionPointJson(const Trace& trace, const DecisionPoint& d) {
  ordered_json j;
  j["kind"] = "decision";
  j["index"] = d.index;
  j["event"] = d.event;
  j["clock"] = d.clock;
  j["step"] = d.program_step;
  j["depth"] = d.remat_depth;
  j["tensor"] = trace.tensors[d.tensor].name;
  j["request"] = d.request;
  j["memory"] = d.memory_usage;
  j["pool"] = d.pool_size;
  j["chosen"] = StorageName(trace, d.chosen);
  AddStorageOrigin(j, trace, d.chosen, "chosen_origin");
  j["score"] = ScoreJson(d.score);
  j["terms"] = TermsJson(d.terms);
  if (d.runner_up >= 0) {
    j["runner_up"] = StorageName(trace, d.runner_up);
    AddStorageOrigin(j, trace, d.runner_up, "runner_up_origin");
    j["runner_up_score"] = ScoreJson(d.runner_up_score);
    j["runner_up_terms"] = TermsJson(d.runner_up_terms);
    if (std::isfinite(d.score) && std::isfinite(d.runner_up_score))
      j["margin"] = d.runner_up_score - d.score;
    else
      j["margin"] = nullptr;
  } else {
    j["runner_up"] = nullptr;
  }
  if (d.overridden) j["overridden"] = true;
  return j;
}

namespace {

// The JSON text ordered_json::dump() gives for a string: printable ASCII
// other than '"' and '\\' as it is, anything else through the library.
void AppendJsonString(std::string& out, std::string_view s) {
  const bool plain = std::all_of(
      s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
  if (plain) {
    out += '"';
    out += s;
    out += '"';
  } else {
    out += ordered_json(std::string(s)).dump();
  }
}

// The text dump() gives for a number: the library's own shortest form
// (nlohmann::detail::to_chars, which dump() calls), null if not finite.
void AppendJsonNumber(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  char buf[64];
  out.append(buf, nlohmann::detail::to_chars(buf, buf + sizeof buf, x));
}

void AppendScore(std::string& out, double score) {  // ScoreJson()
  if (std::isinf(score))
    out += score > 0 ? "\"inf\"" : "\"-inf\"";
  else
    AppendJsonNumber(out, score);
}

// ,"KEY":"ORIGIN" where AddStorageOrigin adds it.
void AppendStorageOrigin(std::string& out, const Trace& trace, StorageId s, std::string_view key) {
  const std::string origin = StorageOrigin(trace, s);
  if (origin.empty()) return;
  fmt::format_to(std::back_inserter(out), ",\"{}\":", key);
  AppendJsonString(out, origin);
}

// ,"PREFIXscore":SCORE,"PREFIXterms":[cost,size,staleness]
void AppendScoreAndTerms(std::string& out, std::string_view prefix, double score,
                         const ScoreTerms& t) {
  fmt::format_to(std::back_inserter(out), ",\"{}score\":", prefix);
  AppendScore(out, score);
  fmt::format_to(std::back_inserter(out), ",\"{}terms\":[{},{},{}]", prefix, t.cost, t.size,
                 t.staleness);
}

}  // namespace

void AppendDecisionPointLine(std::string& out, const Trace& trace, const DecisionPoint& d) {
  auto put = std::back_inserter(out);
  fmt::format_to(put,
                 "{{\"kind\":\"decision\",\"index\":{},\"event\":{},\"clock\":{},\"step\":{},"
                 "\"depth\":{},\"tensor\":",
                 d.index, d.event, d.clock, d.program_step, d.remat_depth);
  AppendJsonString(out, trace.tensors[d.tensor].name);
  fmt::format_to(put, ",\"request\":{},\"memory\":{},\"pool\":{},\"chosen\":", d.request,
                 d.memory_usage, d.pool_size);
  AppendJsonString(out, StorageName(trace, d.chosen));
  AppendStorageOrigin(out, trace, d.chosen, "chosen_origin");
  AppendScoreAndTerms(out, "", d.score, d.terms);
  out += ",\"runner_up\":";
  if (d.runner_up >= 0) {
    AppendJsonString(out, StorageName(trace, d.runner_up));
    AppendStorageOrigin(out, trace, d.runner_up, "runner_up_origin");
    AppendScoreAndTerms(out, "runner_up_", d.runner_up_score, d.runner_up_terms);
    out += ",\"margin\":";
    if (std::isfinite(d.score) && std::isfinite(d.runner_up_score))
      AppendJsonNumber(out, d.runner_up_score - d.score);
    else
      out += "null";
  } else {
    out += "null";
  }
  if (d.overridden) out += ",\"overridden\":true";
  out += '}';
}

DecisionLogWriter::DecisionLogWriter(const std::string& path, const Trace& trace,
                                     const DecisionLogHeader& header)
    : path_(path), pending_(path), trace_(trace) {
  file_ = gzopen(pending_.temp_path().c_str(), "wb6");
  if (!file_) throw InputError(SystemErrorMessage(path, "cannot open for writing"));
  ordered_json j;
  j["format"] = "dtrcheck-decision-log";
  j["version"] = 1;
  j["trace"] = header.trace;
  j["heuristic"] = header.heuristic;
  j["runtime"] = header.runtime;
  j["budget"] = header.budget;
  if (header.ratio)
    j["ratio"] = *header.ratio;
  else
    j["ratio"] = nullptr;
  j["baseline_compute"] = header.baseline_compute;
  line_ = j.dump();
  WriteLine();
}

DecisionLogWriter::~DecisionLogWriter() {
  if (file_) gzclose(file_);
}

void DecisionLogWriter::WriteLine() {
  if (!file_) throw Error(fmt::format("{}: write after the log was finished", path_));
  line_ += '\n';
  if (gzwrite(file_, line_.data(), static_cast<unsigned>(line_.size())) !=
      static_cast<int>(line_.size()))
    throw InputError(SystemErrorMessage(path_, "write error"));
}

Flow DecisionLogWriter::OnDecision(const DecisionPoint& d) {
  line_.clear();
  AppendDecisionPointLine(line_, trace_, d);
  WriteLine();
  ++decisions_;
  return Flow::kContinue;
}

Flow DecisionLogWriter::OnEagerEviction(const EagerEviction& e) {
  ordered_json j;
  j["kind"] = "eager";
  j["storage"] = StorageName(trace_, e.storage);
  AddStorageOrigin(j, trace_, e.storage, "storage_origin");
  j["event"] = e.event;
  j["clock"] = e.clock;
  j["step"] = e.program_step;
  line_ = j.dump();
  WriteLine();
  ++eager_;
  return Flow::kContinue;
}

void DecisionLogWriter::Finish(const RunRecord& run) {
  ordered_json j;
  j["kind"] = "end";
  j["outcome"] = std::string(OutcomeName(run.result.outcome));
  j["clock"] = run.result.clock;
  j["overhead"] = run.overhead;
  j["decisions"] = decisions_;
  j["eager_evictions"] = eager_;
  line_ = j.dump();
  WriteLine();
  int rc = gzclose(file_);
  file_ = nullptr;
  if (rc != Z_OK) throw InputError(SystemErrorMessage(path_, "write error on close"));
  pending_.Commit();
}

DecisionLogHeader DecisionLogHeaderFor(const RunSpec& spec, const Baseline& baseline,
                                       const std::string& trace_name) {
  DecisionLogHeader header;
  header.trace = trace_name;
  header.heuristic = std::string(spec.heuristic->name);
  header.runtime = std::string(RuntimeName(spec.runtime));
  header.budget = ConfigFor(spec, baseline).budget;
  if (spec.ratio && !spec.budget) header.ratio = spec.ratio->text;
  header.baseline_compute = baseline.compute;
  return header;
}

RunRecord RunAndRecord(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                       const std::string& path, const std::string& trace_name,
                       ReplayObserver* watcher) {
  ReplayConfig config = ConfigFor(spec, baseline);
  config.watcher = watcher;
  DecisionLogWriter writer(path, trace, DecisionLogHeaderFor(spec, baseline, trace_name));
  config.observer = &writer;
  RunRecord run = RecordOf(spec, baseline, Replay(trace, config));
  writer.Finish(run);
  return run;
}

namespace {

// Reads a gzip'd (or plain) file line by line.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path) {
    file_ = gzopen(path.c_str(), "rb");
    if (!file_) throw InputError(SystemErrorMessage(path, "cannot open"));
  }
  ~LineReader() { gzclose(file_); }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool Next(std::string& line) {
    line.clear();
    char buf[4096];
    while (gzgets(file_, buf, sizeof buf)) {
      line += buf;
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        return true;
      }
    }
    int err = 0;
    gzerror(file_, &err);
    if (err != Z_OK && err != Z_STREAM_END)
      throw InputError(fmt::format("{}: read error (corrupt gzip data?)", path_));
    return !line.empty();
  }

 private:
  std::string path_;
  gzFile file_;
};

class LogParser {
 public:
  LogParser(const std::string& path, const Trace& trace) : path_(path), trace_(trace) {
    for (size_t t = 0; t < trace.tensors.size(); ++t) tensor_ids_.emplace(trace.tensors[t].name, t);
  }

  DecisionLogFile Parse() {
    DecisionLogFile out;
    LineReader reader(path_);
    std::string text;
    if (!reader.Next(text)) throw InputError(fmt::format("{}: empty decision log", path_));
    line_ = 1;
    ParseHeader(Json(text), out.header);
    while (reader.Next(text)) {
      ++line_;
      if (out.end) Fail("a line after the end record");
      nlohmann::json j = Json(text);
      std::string kind = String(j, "kind");
      if (kind == "decision") {
        out.log.decisions.push_back(ParseDecision(j));
        if (out.log.decisions.back().index != static_cast<int64_t>(out.log.decisions.size()) - 1)
          Fail(fmt::format("decision index {} out of order", out.log.decisions.back().index));
      } else if (kind == "eager") {
        LoggedEagerEviction e;
        e.eviction.storage = Storage(String(j, "storage"));
        e.eviction.event = Int(j, "event");
        e.eviction.clock = Int(j, "clock");
        e.eviction.program_step = static_cast<int32_t>(Int(j, "step"));
        e.decisions_before = static_cast<int64_t>(out.log.decisions.size());
        out.log.eager.push_back(e);
      } else if (kind == "end") {
        DecisionLogEnd end;
        end.outcome = String(j, "outcome");
        end.clock = Int(j, "clock");
        end.overhead = Field(j, "overhead").get<double>();
        end.decisions = Int(j, "decisions");
        end.eager_evictions = Int(j, "eager_evictions");
        if (end.decisions != static_cast<int64_t>(out.log.decisions.size()) ||
            end.eager_evictions != static_cast<int64_t>(out.log.eager.size()))
          Fail("the end record's counts do not match the records before it");
        out.end = end;
      } else {
        Fail(fmt::format("unknown record kind \"{}\"", kind));
      }
    }
    return out;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw InputError(fmt::format("{}:{}: {}", path_, line_, what));
  }

  nlohmann::json Json(const std::string& text) const {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) Fail("expected a JSON object");
    return j;
  }
  const nlohmann::json& Field(const nlohmann::json& j, const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) Fail(fmt::format("missing \"{}\"", key));
    return *it;
  }
  std::string String(const nlohmann::json& j, const char* key) const {
    const nlohmann::json& v = Field(j, key);
    if (!v.is_string()) Fail(fmt::format("\"{}\" must be a string", key));
    return v.get<std::string>();
  }
  int64_t Int(const nlohmann::json& j, const char* key) const {
    const nlohmann::json& v = Field(j, key);
    if (!v.is_number_integer()) Fail(fmt::format("\"{}\" must be an integer", key));
    return v.get<int64_t>();
  }
  double Score(const nlohmann::json& j, const char* key) const {
    const nlohmann::json& v = Field(j, key);
    if (v.is_number()) return v.get<double>();
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    Fail(fmt::format("\"{}\" must be a number, \"inf\" or \"-inf\"", key));
  }
  ScoreTerms Terms(const nlohmann::json& j, const char* key) const {
    const nlohmann::json& v = Field(j, key);
    if (!v.is_array() || v.size() != 3 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
        !v[2].is_number_integer())
      Fail(fmt::format("\"{}\" must be [cost, size, staleness]", key));
    return {v[0].get<int64_t>(), v[1].get<int64_t>(), v[2].get<int64_t>()};
  }
  TensorId Tensor(const std::string& name) const {
    auto it = tensor_ids_.find(name);
    if (it == tensor_ids_.end()) Fail(fmt::format("the trace has no tensor '{}'", name));
    return it->second;
  }
  StorageId Storage(const std::string& name) const {
    TensorId t = Tensor(name);
    StorageId s = trace_.tensors[t].storage;
    if (trace_.storages[s].root != t)
      Fail(fmt::format("'{}' is not the root tensor of a storage", name));
    return s;
  }

  void ParseHeader(const nlohmann::json& j, DecisionLogHeader& h) const {
    if (!j.contains("format") || j["format"] != "dtrcheck-decision-log")
      Fail("not a dtrcheck decision log");
    if (Int(j, "version") != 1) Fail(fmt::format("unsupported version {}", Int(j, "version")));
    h.trace = String(j, "trace");
    h.heuristic = String(j, "heuristic");
    h.runtime = String(j, "runtime");
    h.budget = Int(j, "budget");
    const nlohmann::json& r = Field(j, "ratio");
    if (r.is_string()) h.ratio = r.get<std::string>();
    h.baseline_compute = Int(j, "baseline_compute");
  }

  DecisionPoint ParseDecision(const nlohmann::json& j) const {
    DecisionPoint d;
    d.index = Int(j, "index");
    d.event = Int(j, "event");
    d.clock = Int(j, "clock");
    d.program_step = static_cast<int32_t>(Int(j, "step"));
    d.remat_depth = static_cast<int32_t>(Int(j, "depth"));
    d.tensor = Tensor(String(j, "tensor"));
    d.request = Int(j, "request");
    d.memory_usage = Int(j, "memory");
    d.pool_size = static_cast<int32_t>(Int(j, "pool"));
    d.chosen = Storage(String(j, "chosen"));
    d.score = Score(j, "score");
    d.terms = Terms(j, "terms");
    const nlohmann::json& ru = Field(j, "runner_up");
    if (!ru.is_null()) {
      if (!ru.is_string()) Fail("\"runner_up\" must be a name or null");
      d.runner_up = Storage(ru.get<std::string>());
      d.runner_up_score = Score(j, "runner_up_score");
      d.runner_up_terms = Terms(j, "runner_up_terms");
    }
    d.overridden = j.value("overridden", false);
    return d;
  }

  std::string path_;
  const Trace& trace_;
  std::unordered_map<std::string, TensorId> tensor_ids_;
  int64_t line_ = 0;
};

}  // namespace

DecisionLogFile ReadDecisionLog(const std::string& path, const Trace& trace) {
  return LogParser(path, trace).Parse();
}

}  // namespace dtr
