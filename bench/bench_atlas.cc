// Times the exact budget atlas (checker/budget_atlas.h) on a few ranges of
// the shared traces: replays, intervals, wall seconds, replays per second.
//
//   ninja -C build bench_atlas && build/bench_atlas [--traces DIR] [-j N] [CASE...]
//
// CASE is one of resnet32, unet, lstm (default: all three). Never part of the
// test run.
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "checker/budget_atlas.h"
#include "checker/heuristic.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "traces/manifest.h"

namespace {

struct Case {
  std::string name;  // trace file prefix
  double ratio_lo, ratio_hi;
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Case> all = {{"resnet32", 0.085, 0.125}, {"unet", 0.40, 0.45}, {"lstm", 0.26, 0.27}};
  int jobs = 1;
  std::string traces = DTRCHECK_BENCH_TRACES;
  std::vector<Case> chosen;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-j" && i + 1 < argc) {
      jobs = std::atoi(argv[++i]);
      continue;
    }
    if (a == "--traces" && i + 1 < argc) {
      traces = argv[++i];
      continue;
    }
    bool known = false;
    for (const Case& c : all)
      if (c.name == a) chosen.push_back(c), known = true;
    // NAME:LO:HI, a range of one's own.
    if (size_t c1 = a.find(':'), c2 = a.rfind(':'); !known && c1 != std::string::npos && c2 != c1) {
      chosen.push_back({a.substr(0, c1), std::atof(a.substr(c1 + 1, c2 - c1 - 1).c_str()),
                        std::atof(a.substr(c2 + 1).c_str())});
      known = true;
    }
    if (!known) {
      fmt::print(stderr, "usage: bench_atlas [--traces DIR] [-j N] [resnet32|unet|lstm|NAME:LO:HI ...]\n");
      return 2;
    }
  }
  if (chosen.empty()) chosen = all;
  fmt::print("{:<10} {:>7} {:>7} {:>5} {:>8} {:>9} {:>9} {:>8} {:>8}\n", "trace", "from", "to", "jobs", "runs",
             "intervals", "behaviours", "seconds", "runs/s");
  for (const Case& c : chosen) {
    dtr::Trace trace;
    try {
      trace = dtr::LoadTrace(dtr::FindPublicTrace(traces, c.name));
    } catch (const dtr::Error& e) {  // an unknown name, a missing or malformed trace
      fmt::print(stderr, "bench_atlas: {}\n", e.what());
      return 1;
    }
    dtr::Baseline baseline = dtr::ComputeBaseline(trace);
    dtr::RunSpec spec;
    spec.heuristic = &dtr::FindHeuristic("DTR");
    auto start = std::chrono::steady_clock::now();
    dtr::BudgetAtlas atlas =
        dtr::BuildAtlas(trace, baseline, spec, dtr::BudgetForRatio(baseline.memory, c.ratio_lo),
                        dtr::BudgetForRatio(baseline.memory, c.ratio_hi), jobs);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{:<10} {:>7} {:>7} {:>5} {:>8} {:>9} {:>9} {:>8.2f} {:>8.1f}\n", c.name, c.ratio_lo, c.ratio_hi, jobs,
               atlas.runs, atlas.intervals.size(), atlas.summary.distinct_behaviours, secs, atlas.runs / secs);
    std::fflush(stdout);
  }
  return 0;
}
