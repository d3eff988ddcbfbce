// The decision log of one run: every heuristic decision point and every
// eager eviction, in the order the replay made them. Kept in memory by
// DecisionRecorder, written to disk by DecisionLogWriter as gzip'd JSON lines
// (docs/decision_log.md) and read back by ReadDecisionLog. On disk a storage
// is named by the name of its root tensor, which is unique in a trace.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checker/drivers/sweep.h"
#include "checker/engine/replay.h"
#include "model/output_file.h"

struct gzFile_s;  // zlib's file handle

namespace dtr {

struct LoggedEagerEviction {
  EagerEviction eviction;
  int64_t decisions_before = 0;  // heuristic decisions made before it in the run
};

// What a run did, decision by decision. decisions[i].index == i.
struct DecisionLog {
  std::vector<DecisionPoint> decisions;
  std::vector<LoggedEagerEviction> eager;
};

// Collects a run's decision log in memory.
class DecisionRecorder : public ReplayObserver {
 public:
  Flow OnDecision(const DecisionPoint& d) override {
    log_.decisions.push_back(d);
    return Flow::kContinue;
  }
  Flow OnEagerEviction(const EagerEviction& e) override {
    log_.eager.push_back({e, static_cast<int64_t>(log_.decisions.size())});
    return Flow::kContinue;
  }
  DecisionLog& log() { return log_; }

 private:
  DecisionLog log_;
};

// The first line of a log file: what was replayed.
struct DecisionLogHeader {
  std::string trace;  // file name of the trace
  std::string heuristic;
  std::string runtime;
  int64_t budget = 0;
  std::optional<std::string> ratio;  // decimal text, when the budget came from a ratio
  int64_t baseline_compute = 0;
};

// The last line of a log file: how the run ended.
struct DecisionLogEnd {
  std::string outcome;  // OutcomeName()
  int64_t clock = 0;
  double overhead = 0;
  int64_t decisions = 0;
  int64_t eager_evictions = 0;
};

// Streams a run's decisions to a gzip'd JSON-lines file as they happen, so
// that a run with millions of decisions never holds them in memory. Any I/O
// failure throws Error naming the file. The file is written under a temporary
// name and appears at `path` only when Finish() succeeds (model/output_file.h).
class DecisionLogWriter : public ReplayObserver {
 public:
  DecisionLogWriter(const std::string& path, const Trace& trace, const DecisionLogHeader& header);
  ~DecisionLogWriter() override;
  DecisionLogWriter(const DecisionLogWriter&) = delete;
  DecisionLogWriter& operator=(const DecisionLogWriter&) = delete;

  Flow OnDecision(const DecisionPoint& d) override;
  Flow OnEagerEviction(const EagerEviction& e) override;
  // Writes the end line and closes the file. REQUIRES: called once, after the run.
  void Finish(const RunRecord& run);

 private:
  void WriteLine();  // line_ and a newline

  std::string path_;
  PendingFile pending_;
  const Trace& trace_;
  gzFile_s* file_ = nullptr;
  int64_t decisions_ = 0, eager_ = 0;
  std::string line_;  // the line being written (its buffer reused)
};

// One decision as a JSON object, with the keys of a log line (docs/decision_log.md).
nlohmann::ordered_json DecisionPointJson(const Trace& trace, const DecisionPoint& d);
// A score as JSON: a number, or "inf" / "-inf" (JSON has no infinities).
nlohmann::ordered_json ScoreJson(double score);
// Appends DecisionPointJson(trace, d).dump() to `out`, the same text,
// without building the object: the writer's way (building it took a quarter of
// --record's time on LSTM 0.266 LRU).
void AppendDecisionPointLine(std::string& out, const Trace& trace, const DecisionPoint& d);

// The header of spec's run's log (`trace_name`: the trace's file name).
DecisionLogHeader DecisionLogHeaderFor(const RunSpec& spec, const Baseline& baseline,
                                       const std::string& trace_name);

// Replays one run while writing its decision log to `path`; `watcher` as
// ReplayConfig::watcher.
RunRecord RunAndRecord(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                       const std::string& path, const std::string& trace_name,
                       ReplayObserver* watcher = nullptr);

struct DecisionLogFile {
  DecisionLogHeader header;
  DecisionLog log;
  std::optional<DecisionLogEnd> end;  // absent if the file was cut short
};

// Reads a file written by DecisionLogWriter (gzip'd or plain), resolving
// storage and tensor names against `trace`. Throws Error "PATH:LINE: ..." for
// malformed lines or names the trace does not have.
DecisionLogFile ReadDecisionLog(const std::string& path, const Trace& trace);

}  // namespace dtr
