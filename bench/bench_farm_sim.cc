// How the exact atlas would scale over many MPI ranks (docs/mpi.md), from
// per-replay costs measured on this machine. Two steps:
//
//   bench_farm_sim record NAME LO:HI OUT.csv [--traces DIR] [--max-runs N]
//     walks the DTR atlas of trace NAME over ratios LO..HI on one thread and
//     writes, per interval in budget order, its bytes and the seconds its
//     replay took, plus the seconds of parsing and the baseline (what every
//     rank does before the farm).
//   bench_farm_sim simulate COSTS.csv... [--ranks 16,64,...] [--cpu-hours H]
//       [--latency-ms L] [--parts-per-rank K]
//     replays the farm of checker/farm/mpi_farm.cc on those costs for each number
//     of ranks: the range is cut as BuildAtlas cuts it (AtlasWalk, 4 parts per
//     rank, or K), a part costs the replays of the intervals it overlaps (a run that
//     crosses a seam is replayed in both parts, as the walk does), and parts
//     are handed out in order, one at a time, to whichever rank is free
//     (rank 0's own worker included), each hand-out costing L ms. Prints the
//     predicted makespan and the efficiency T(1) / (N * T(N)), both with the
//     setup every rank repeats. With --cpu-hours H, the recorded intervals are
//     repeated end to end until their replays cost H CPU-hours: a stand-in for
//     a whole-range atlas (tens of CPU-hours on LSTM) that keeps the recorded
//     mix of cheap and costly replays and their clustering.
//
// Never part of the test run; the recorded files are in bench/farm_costs/.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <queue>
#include <sstream>
#include <string>
#include <vector>

#include "checker/drivers/atlas_walk.h"
#include "checker/drivers/budget_atlas.h"
#include "checker/engine/heuristic.h"
#include "checker/engine/replay.h"
#include "model/error.h"
#include "model/trace_parser.h"
#include "traces/manifest.h"

namespace {

using Clock = std::chrono::steady_clock;

// BuildAtlas's parts per worker (checker/drivers/budget_atlas.cc, kPartsPerWorker);
// --parts-per-rank tries others.
size_t g_parts_per_rank = 4;

[[noreturn]] void Usage() {
  fmt::print(stderr,
             "usage: bench_farm_sim record NAME LO:HI OUT.csv [--traces DIR] [--max-runs N]\n"
             "       bench_farm_sim simulate COSTS.csv... [--ranks 16,64,...] [--cpu-hours H] [--latency-ms L]\n"
             "                                    [--parts-per-rank K]\n");
  std::exit(2);
}

int Record(int argc, char** argv) {
  if (argc < 5) Usage();
  std::string name = argv[2], range = argv[3], out_path = argv[4];
  std::string traces = DTRCHECK_BENCH_TRACES;
  size_t max_runs = 0;
  for (int i = 5; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--traces" && i + 1 < argc) traces = argv[++i];
    else if (a == "--max-runs" && i + 1 < argc) max_runs = std::strtoull(argv[++i], nullptr, 10);
    else Usage();
  }
  size_t colon = range.find(':');
  if (colon == std::string::npos) Usage();
  const double ratio_lo = std::atof(range.substr(0, colon).c_str()), ratio_hi = std::atof(range.substr(colon + 1).c_str());

  auto start = Clock::now();
  dtr::Trace trace = dtr::LoadTrace(dtr::FindPublicTrace(traces, name));
  dtr::Baseline baseline = dtr::ComputeBaseline(trace);
  const double setup = std::chrono::duration<double>(Clock::now() - start).count();
  dtr::RunSpec spec;
  spec.heuristic = &dtr::FindHeuristic("DTR");
  const int64_t lo = dtr::BudgetForRatio(baseline.memory, ratio_lo), hi = dtr::BudgetForRatio(baseline.memory, ratio_hi);

  // One worker: each interval is recorded right after its replay, so the time
  // between two records is one replay.
  struct Row {
    int64_t lo, hi;
    double seconds;
  };
  std::vector<Row> rows;
  Clock::time_point last = Clock::now();
  dtr::AtlasJournal journal;
  journal.record = [&](const dtr::AtlasInterval& iv) {
    Clock::time_point now = Clock::now();
    rows.push_back({iv.lo, iv.hi, std::chrono::duration<double>(now - last).count()});
    last = now;
  };
  dtr::BudgetAtlas atlas = dtr::BuildAtlas(trace, baseline, spec, lo, hi, 1, nullptr, max_runs, &journal);
  double total = 0;
  for (const Row& r : rows) total += r.seconds;

  std::ofstream out(out_path);
  out << fmt::format("# trace {} ratios {}:{} bytes {}:{} setup_seconds {:.6f} replays {} replay_seconds {:.3f}{}\n",
                     name, ratio_lo, ratio_hi, lo, atlas.stopped ? rows.back().hi : hi, setup, rows.size(), total,
                     atlas.stopped ? " (stopped at --max-runs)" : "");
  out << "lo,hi,seconds\n";
  for (const Row& r : rows) out << fmt::format("{},{},{:.6f}\n", r.lo, r.hi, r.seconds);
  fmt::print("{}: {} replays, {:.1f} s of replays (min {:.4f} s, max {:.4f} s), setup {:.2f} s -> {}\n", name,
             rows.size(), total,
             std::min_element(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; })->seconds,
             std::max_element(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; })->seconds,
             setup, out_path);
  return 0;
}

struct Costs {
  std::string name;
  double setup = 0;
  int64_t lo = 0, hi = 0;
  std::vector<int64_t> start;  // interval lo, sorted
  std::vector<int64_t> end;    // interval hi
  std::vector<double> seconds;
  double total = 0;
};

Costs ReadCosts(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "{}: cannot read\n", path);
    std::exit(1);
  }
  Costs c;
  std::string line;
  std::getline(in, line);
  {
    std::istringstream h(line);
    std::string word, bytes;
    while (h >> word) {
      if (word == "trace") h >> c.name;
      else if (word == "setup_seconds") h >> c.setup;
      else if (word == "bytes") h >> bytes;
    }
    size_t colon = bytes.find(':');
    if (c.name.empty() || colon == std::string::npos) {
      fmt::print(stderr, "{}: not a file of bench_farm_sim record\n", path);
      std::exit(1);
    }
    c.lo = std::stoll(bytes.substr(0, colon));
    c.hi = std::stoll(bytes.substr(colon + 1));
  }
  std::getline(in, line);  // lo,hi,seconds
  while (std::getline(in, line)) {
    int64_t lo = 0, hi = 0;
    double s = 0;
    if (std::sscanf(line.c_str(), "%ld,%ld,%lf", &lo, &hi, &s) != 3) continue;
    c.start.push_back(lo);
    c.end.push_back(hi);
    c.seconds.push_back(s);
    c.total += s;
  }
  return c;
}

// The recorded intervals repeated `copies` times end to end.
Costs Tile(const Costs& c, size_t copies) {
  Costs t = c;
  t.start.clear();
  t.end.clear();
  t.seconds.clear();
  t.total = 0;
  const int64_t width = c.hi - c.lo + 1;
  for (size_t k = 0; k < copies; ++k)
    for (size_t i = 0; i < c.start.size(); ++i) {
      t.start.push_back(c.start[i] + static_cast<int64_t>(k) * width);
      t.end.push_back(c.end[i] + static_cast<int64_t>(k) * width);
      t.seconds.push_back(c.seconds[i]);
      t.total += c.seconds[i];
    }
  t.hi = c.lo + static_cast<int64_t>(copies) * width - 1;
  return t;
}

struct Prediction {
  size_t parts = 0;
  double work = 0;      // replay seconds including seam replays
  double makespan = 0;  // setup + farm
};

// The farm of checker/farm/mpi_farm.cc on `ranks` ranks over the costs.
Prediction Simulate(const Costs& c, size_t ranks, double latency) {
  dtr::AtlasWalk walk(c.lo, c.hi, {}, 0, ranks == 1 ? 1 : g_parts_per_rank * ranks);
  const auto& parts = walk.parts();
  std::vector<double> cost(parts.size(), 0);
  // Intervals are sorted and tile the range; a part costs those it overlaps.
  size_t first = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    while (first < c.end.size() && c.end[first] < parts[k].lo) ++first;
    for (size_t i = first; i < c.start.size() && c.start[i] <= parts[k].hi; ++i) cost[k] += c.seconds[i];
  }
  Prediction p;
  p.parts = parts.size();
  // In part order, to the rank free first (rank 0's thread is one of them).
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (size_t r = 0; r < ranks; ++r) free_at.push(0.0);
  double end = 0;
  for (double w : cost) {
    double t = free_at.top();
    free_at.pop();
    t += latency + w;
    end = std::max(end, t);
    free_at.push(t);
    p.work += w;
  }
  p.makespan = c.setup + end;
  return p;
}

int SimulateAll(int argc, char** argv) {
  std::vector<std::string> files;
  std::vector<size_t> ranks = {1, 16, 32, 64, 128, 256, 512, 1024};
  double cpu_hours = 0, latency_ms = 2;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc) {
      ranks = {1};
      std::stringstream list(argv[++i]);
      for (std::string n; std::getline(list, n, ',');) ranks.push_back(std::stoul(n));
    } else if (a == "--cpu-hours" && i + 1 < argc) {
      cpu_hours = std::atof(argv[++i]);
    } else if (a == "--parts-per-rank" && i + 1 < argc) {
      g_parts_per_rank = std::max<size_t>(1, std::stoul(argv[++i]));
    } else if (a == "--latency-ms" && i + 1 < argc) {
      latency_ms = std::atof(argv[++i]);
    } else if (a.rfind("--", 0) == 0) {
      Usage();
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) Usage();
  for (const std::string& f : files) {
    Costs recorded = ReadCosts(f);
    size_t copies = 1;
    if (cpu_hours > 0) copies = std::max<size_t>(1, static_cast<size_t>(std::ceil(cpu_hours * 3600 / recorded.total)));
    Costs c = Tile(recorded, copies);
    double lo = *std::min_element(c.seconds.begin(), c.seconds.end());
    double hi = *std::max_element(c.seconds.begin(), c.seconds.end());
    fmt::print("{}: {} replays ({} recorded x {}), {:.2f} CPU-hours, replays {:.3f}..{:.2f} s, setup {:.2f} s per rank\n",
               c.name, c.seconds.size(), recorded.seconds.size(), copies, c.total / 3600, lo, hi, c.setup);
    fmt::print("| ranks | parts | replay CPU (h) | predicted makespan | efficiency |\n|---:|---:|---:|---:|---:|\n");
    const double t1 = Simulate(c, 1, latency_ms / 1000).makespan;
    for (size_t n : ranks) {
      Prediction p = Simulate(c, n, latency_ms / 1000);
      double eff = t1 / (static_cast<double>(n) * p.makespan);
      std::string span = p.makespan >= 3600   ? fmt::format("{:.2f} h", p.makespan / 3600)
                         : p.makespan >= 120 ? fmt::format("{:.1f} min", p.makespan / 60)
                                             : fmt::format("{:.1f} s", p.makespan);
      fmt::print("| {} | {} | {:.2f} | {} | {:.0f}% |\n", n, p.parts, p.work / 3600, span, 100 * eff);
    }
    fmt::print("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Usage();
  std::string mode = argv[1];
  try {
    if (mode == "record") return Record(argc, argv);
    if (mode == "simulate") return SimulateAll(argc, argv);
  } catch (const dtr::Error& e) {  // a missing or malformed trace
    fmt::print(stderr, "bench_farm_sim: {}\n", e.what());
    return 1;
  }
  Usage();
}
