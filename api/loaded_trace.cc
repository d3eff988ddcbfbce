#include "api/loaded_trace.h"

#include <filesystem>

#include "checker/persist/file_digest.h"
#include "model/trace_parser.h"
#include "traces/demo.h"

namespace dtr::api {

namespace {

LoadedTrace Loaded(std::string path, Trace trace, const std::string& name) {
  LoadedTrace t;
  t.path = std::move(path);
  t.trace = std::move(trace);
  t.baseline = ComputeBaseline(t.trace);
  t.summary = Summarize(name, t.baseline);
  return t;
}

}  // namespace

TraceFingerprint LoadedTrace::Fingerprint() const {
  return FingerprintOf(trace, baseline, FileDigest(path), std::filesystem::path(path).filename().string());
}

LoadedTrace LoadTraceFile(const std::string& path) { return Loaded(path, LoadTrace(path), path); }

LoadedTrace LoadDemoTrace() { return Loaded("", ParseTraceString(GenerateDemo(), "demo"), "demo"); }

}  // namespace dtr::api
