// Times the exact budget atlas (checker/drivers/budget_atlas.h) on a few ranges of
// the shared traces: replays, intervals, wall seconds and replays per second
// with each run replayed from the start ("fresh") and resumed from the run
// below it (checker/drivers/rising_replays.h, what the atlas does), and the ratio.
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

#include "checker/drivers/budget_atlas.h"
#include "checker/drivers/rising_replays.h"
#include "checker/engine/heuristic.h"
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
  fmt::print("{:<10} {:>7} {:>7} {:>5} {:>8} {:>9} {:>10} {:>9} {:>9} {:>8} {:>9}\n", "trace", "from", "to", "jobs",
             "runs", "intervals", "behaviours", "fresh s", "rising s", "ratio", "runs/s");
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
    double secs[2];
    dtr::BudgetAtlas atlas[2];
    for (int rising : {0, 1}) {
      dtr::RisingReplays::set_resuming(rising);
      auto start = std::chrono::steady_clock::now();
      atlas[rising] = dtr::BuildAtlas(trace, baseline, spec, dtr::BudgetForRatio(baseline.memory, c.ratio_lo),
                                      dtr::BudgetForRatio(baseline.memory, c.ratio_hi), jobs);
      secs[rising] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    bool same = atlas[0].intervals.size() == atlas[1].intervals.size() && atlas[0].runs == atlas[1].runs;
    for (size_t i = 0; same && i < atlas[0].intervals.size(); ++i) {
      const dtr::AtlasInterval &x = atlas[0].intervals[i], &y = atlas[1].intervals[i];
      same = x.lo == y.lo && x.hi == y.hi && x.run_lo == y.run_lo && x.run_hi == y.run_hi &&
             x.behaviour.clock == y.behaviour.clock && x.heuristic_evals == y.heuristic_evals;
    }
    if (!same) {
      fmt::print(stderr, "bench_atlas: {}: the fresh and rising atlases differ\n", c.name);
      return 1;
    }
    const dtr::BudgetAtlas& a = atlas[1];
    fmt::print("{:<10} {:>7} {:>7} {:>5} {:>8} {:>9} {:>10} {:>9.2f} {:>9.2f} {:>7.2f}x {:>9.1f}\n", c.name,
               c.ratio_lo, c.ratio_hi, jobs, a.runs, a.intervals.size(), a.summary.distinct_behaviours, secs[0],
               secs[1], secs[0] / secs[1], a.runs / secs[1]);
    std::fflush(stdout);
  }
  return 0;
}
