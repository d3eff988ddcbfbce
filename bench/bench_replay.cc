// Replay speed on the public traces: parse and baseline time, then one DTR
// run per ratio (default 0.1 .. 1.0) on each trace, reporting seconds per run
// and computations (events) per second; then the ResNet-32 full-grid sweep
// 0.050..1.000 step 0.001 (951 runs) on all cores.
//
//   ninja -C build bench_replay && ./build/bench_replay [--traces DIR] [--ratios SPEC] [--only NAME]
//                                                      [--index-from POOL_SIZE]
// (--index-from: see bench_scale.cc.)
//
// Never part of the test run.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "checker/drivers/ratio_grid.h"
#include "checker/drivers/sweep.h"
#include "checker/engine/heuristic_policy.h"
#include "model/trace_parser.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::string Find(const std::string& dir, const std::string& prefix) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix + "-", 0) == 0) return e.path().string();
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string traces = DTRCHECK_BENCH_TRACES, ratios_spec = "0.1:1.0:0.1", only;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--traces") traces = argv[i + 1];
    if (flag == "--ratios") ratios_spec = argv[i + 1];
    if (flag == "--only") only = argv[i + 1];
    if (flag == "--index-from") dtr::HeuristicPolicy::set_index_from_pool(std::stoi(argv[i + 1]));
  }
  using Clock = std::chrono::steady_clock;
  std::vector<dtr::Ratio> ratios = dtr::ParseRatios(ratios_spec);
  const dtr::HeuristicSpec& dtr_heuristic = dtr::FindHeuristic("DTR");
  fmt::print("{:<16} {:>8} {:>9} {:>7} {:>6} {:>10} {:>10} {:>12}\n", "trace", "parse s", "baseline", "ratio",
             "result", "run s", "events", "events/s");
  for (const char* name :
       {"resnet32", "unet", "lstm", "treelstm", "transformer", "tv_densenet121", "inceptionv4", "unroll_gan"}) {
    if (!only.empty() && only != name) continue;
    std::string path = Find(traces, name);
    if (path.empty()) continue;
    auto t0 = Clock::now();
    dtr::Trace trace = dtr::LoadTrace(path);
    double parse = Seconds(t0);
    t0 = Clock::now();
    dtr::Baseline baseline = dtr::ComputeBaseline(trace);
    double base = Seconds(t0);
    for (const dtr::Ratio& r : ratios) {
      dtr::RunSpec spec;
      spec.heuristic = &dtr_heuristic;
      spec.ratio = r;
      t0 = Clock::now();
      dtr::RunRecord run = dtr::RunOne(trace, baseline, spec);
      double secs = Seconds(t0);
      fmt::print("{:<16} {:>8.3f} {:>9.3f} {:>7} {:>6} {:>10.4f} {:>10} {:>12.0f}\n", name, parse, base, r.text,
                 dtr::OutcomeName(run.result.outcome), secs, run.result.events, run.result.events / secs);
      std::fflush(stdout);
    }
  }
  if (only.empty() || only == "resnet32") {
    std::string path = Find(traces, "resnet32");
    if (!path.empty()) {
      dtr::Trace trace = dtr::LoadTrace(path);
      dtr::Baseline baseline = dtr::ComputeBaseline(trace);
      std::vector<dtr::RunSpec> specs;
      for (const dtr::Ratio& r : dtr::ParseRatios("0.050:1.000:0.001")) {
        dtr::RunSpec s;
        s.heuristic = &dtr_heuristic;
        s.ratio = r;
        specs.push_back(s);
      }
      auto t0 = Clock::now();
      std::vector<dtr::RunRecord> runs = dtr::RunMany(trace, baseline, specs, 0);
      double secs = Seconds(t0);
      int64_t events = 0;
      for (const auto& r : runs) events += r.result.events;
      fmt::print("\nresnet32 sweep 0.050..1.000 step 0.001: {} runs in {:.2f} s on {} threads ({:.1f} runs/s, {:.0f} events/s)\n",
                 runs.size(), secs, std::thread::hardware_concurrency(), runs.size() / secs, events / secs);
    }
  }
  return 0;
}
