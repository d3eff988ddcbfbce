// What `dtrcheck replay TRACE --ratio R` costs, phase by phase, in one
// process: parse, baseline (RuntimeV1, infinite budget), then one DTR run on
// RuntimeV2EagerOptimized at each ratio, each stopped once it has used
// --limit CPU seconds (checked at every computation). Prints one line per
// phase: CPU seconds (this process, user + system), the process's peak RSS
// so far (VmHWM), and for a run its outcome, computations performed and
// heuristic evaluations, also when stopped.
//
//   ninja -C build bench_scale && ./build/bench_scale TRACE [--ratio R]... [--limit S] [--index-from N]
//
// --index-from N: choices use the score index from pool size N on (default:
// the library's; 0 always; a huge N never).
//
// For bench/growth.sh; never part of the test run.
#include <fmt/core.h>

#include <malloc.h>

#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "checker/engine/heuristic.h"
#include "checker/engine/heuristic_policy.h"
#include "checker/engine/replay.h"
#include "model/process_heap.h"
#include "model/trace_parser.h"

namespace {

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A field of /proc/self/status in MB ("VmHWM", "VmRSS").
double StatusMb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stod(line.substr(key.size() + 1)) / 1024.0;
  return 0;
}

// Bytes in use on the heap (small blocks and mmapped ones), in MB.
double HeapMb() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
}

// Asks the engine to stop at the first computation after `limit` CPU seconds.
class CpuLimit : public dtr::ReplayObserver {
 public:
  explicit CpuLimit(double limit) : deadline_(CpuSeconds() + limit) {}
  dtr::Flow OnComputation(const dtr::Computation&) override {
    if ((++count_ & 255) != 0) return dtr::Flow::kContinue;
    return CpuSeconds() > deadline_ ? dtr::Flow::kStop : dtr::Flow::kContinue;
  }

 private:
  double deadline_;
  int64_t count_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  dtr::TuneHeapForReplay();  // as dtrcheck's main does
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_scale TRACE [--ratio R]... [--limit CPU_SECONDS] [--index-from POOL_SIZE]\n");
    return 2;
  }
  std::string path = argv[1];
  std::vector<double> ratios;
  double limit = 60;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--ratio") ratios.push_back(std::stod(argv[i + 1]));
    if (flag == "--limit") limit = std::stod(argv[i + 1]);
    if (flag == "--index-from") dtr::HeuristicPolicy::set_index_from_pool(std::stoi(argv[i + 1]));
  }
  double t0 = CpuSeconds();
  dtr::Trace trace = dtr::LoadTrace(path);
  double t1 = CpuSeconds();
  fmt::print("parse {:.3f} s, peak RSS {:.1f} MB, RSS {:.1f} MB, heap in use {:.1f} MB, {} operators\n", t1 - t0,
             StatusMb("VmHWM"), StatusMb("VmRSS"), HeapMb(), trace.ops.size());
  dtr::Baseline baseline = dtr::ComputeBaseline(trace);
  double t2 = CpuSeconds();
  fmt::print("baseline {:.3f} s, peak RSS {:.1f} MB\n", t2 - t1, StatusMb("VmHWM"));
  for (double ratio : ratios) {
    dtr::ReplayConfig config;
    config.heuristic = &dtr::FindHeuristic("DTR");
    config.budget = dtr::BudgetForRatio(baseline.memory, ratio);
    CpuLimit stop(limit);
    config.watcher = &stop;  // the plain path, as dtrcheck replay
    double t = CpuSeconds();
    dtr::RunResult r = dtr::Replay(trace, config);
    double cpu = CpuSeconds() - t;
    const char* outcome = r.outcome == dtr::Outcome::kPass      ? "pass"
                          : r.outcome == dtr::Outcome::kOom     ? "oom"
                          : r.outcome == dtr::Outcome::kStopped ? "stopped"
                                                                : "other";
    fmt::print("ratio {} {} {:.3f} s, {} computations, {} evaluations, peak RSS {:.1f} MB\n", ratio, outcome, cpu,
               r.events, r.heuristic_evals, StatusMb("VmHWM"));
  }
  return 0;
}
