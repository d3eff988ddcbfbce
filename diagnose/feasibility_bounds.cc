#include "diagnose/feasibility_bounds.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "checker/eviction_script.h"
#include "checker/sweep.h"
#include "diagnose/oom_classification.h"
#include "model/error.h"

namespace dtr {

namespace {

int Decimals(const std::string& text) {
  size_t dot = text.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
}

// The fine grid strictly between the coarse neighbours of `r` (r itself
// excluded): below it to find a smaller feasible ratio, above it to find the
// inversions the coarse grid steps over.
std::vector<Ratio> FineGrid(const Ratio& r, const std::vector<Ratio>& coarse,
                            const std::string& fine_step) {
  auto it = std::find_if(coarse.begin(), coarse.end(),
                         [&](const Ratio& c) { return c.value == r.value; });
  if (it == coarse.end()) return {};
  double step = ParseRatio(fine_step).value;
  std::vector<Ratio> out;
  auto between = [&](const Ratio& lo, const Ratio& hi) {
    int digits = std::max({Decimals(fine_step), Decimals(lo.text), Decimals(hi.text)});
    double from = lo.value + step, to = hi.value - step;
    if (from > to + step / 2) return;
    for (Ratio& x : ParseRatios(fmt::format("{:.{}f}:{:.{}f}:{}", from, digits, to, digits, fine_step)))
      out.push_back(std::move(x));
  };
  if (it != coarse.begin()) between(*(it - 1), r);
  if (it + 1 != coarse.end()) between(r, *(it + 1));
  return out;
}

}  // namespace

BoundsReport ComputeBounds(const Trace& trace, const Baseline& baseline,
                           const BoundsOptions& options, const BoundsProgress& progress) {
  BoundsReport rep;
  rep.baseline_memory = baseline.memory;
  rep.grid = options.grid;
  rep.fine_step = options.fine_step;
  rep.static_bound = ComputeMemoryBound(trace);
  rep.proven_infeasible_below = rep.static_bound.bytes;
  std::vector<const HeuristicSpec*> heuristics = options.heuristics;
  if (heuristics.empty()) heuristics.push_back(&FindHeuristic("DTR"));

  std::vector<Ratio> coarse;
  for (const Ratio& r : ParseRatios(options.grid))
    if (BudgetForRatio(baseline.memory, r.value) >= rep.static_bound.bytes) coarse.push_back(r);

  auto spec_for = [&](const HeuristicSpec* h, const Ratio& r) {
    RunSpec s;
    s.heuristic = h;
    s.runtime = options.runtime;
    s.ratio = r;
    s.overhead_limit = options.overhead_limit;
    return s;
  };
  auto run_all = [&](const std::string& stage, const std::vector<RunSpec>& specs) {
    return RunMany(trace, baseline, specs, options.jobs, [&](size_t d, size_t t) {
      if (progress) progress(stage, d, t);
    });
  };
  std::vector<RunRecord> passing;
  for (const HeuristicSpec* h : heuristics) {
    HeuristicBound hb;
    hb.heuristic = h;
    std::vector<RunSpec> specs;
    for (const Ratio& r : coarse) specs.push_back(spec_for(h, r));
    std::vector<RunRecord> runs = run_all(fmt::format("{} on the grid", h->name), specs);
    if (!options.fine_step.empty()) {
      for (const RunRecord& rr : runs)
        if (rr.result.outcome == Outcome::kPass) {
          std::vector<RunSpec> fine;
          for (const Ratio& r : FineGrid(*rr.spec.ratio, coarse, options.fine_step))
            fine.push_back(spec_for(h, r));
          std::vector<RunRecord> more = run_all(fmt::format("{} on the fine grid", h->name), fine);
          runs.insert(runs.end(), more.begin(), more.end());
          break;
        }
    }
    std::vector<std::pair<double, size_t>> by_ratio;
    for (size_t i = 0; i < runs.size(); ++i) by_ratio.emplace_back(runs[i].spec.ratio->value, i);
    std::sort(by_ratio.begin(), by_ratio.end());
    for (const auto& [value, index] : by_ratio) {
      const RunRecord& rr = runs[index];
      ++hb.runs;
      hb.thrashed += rr.result.outcome == Outcome::kThrash;
      if (rr.result.outcome == Outcome::kPass) {
        passing.push_back(rr);
        if (!hb.smallest_feasible) {
          hb.smallest_feasible = *rr.spec.ratio;
          hb.smallest_feasible_budget = rr.result.budget;
          hb.peak_there = rr.result.max_memory;
        }
      } else if (hb.smallest_feasible) {
        hb.oom_above.push_back(*rr.spec.ratio);
      }
    }
    rep.heuristics.push_back(std::move(hb));
  }

  // The best schedule: the passing run with the smallest peak, checked at that peak.
  auto best_run =
      std::min_element(passing.begin(), passing.end(), [](const RunRecord& a, const RunRecord& b) {
        return a.result.max_memory < b.result.max_memory;
      });
  if (best_run != passing.end()) {
    ScriptedRun sr = ScriptOfRun(trace, ConfigFor(best_run->spec, baseline));
    VerifiedSchedule v;
    v.heuristic = best_run->spec.heuristic;
    v.ratio = *best_run->spec.ratio;
    v.budget = sr.run.max_memory;
    v.check = CheckSchedule(trace, v.budget, sr.script, options.runtime);
    if (!v.check.passed())
      throw Error(
          fmt::format("internal error: the script of {} at ratio {} fails at its own peak: {}",
                      v.heuristic->name, v.ratio.text, DescribeScheduleCheck(v.check)));
    rep.best = std::move(v);
  }

  // Z3 windows raise the proven bound: bisect each between the static bound
  // and the best known schedule.
  int64_t hi = rep.best ? rep.best->budget : baseline.memory;
  int64_t resolution =
      std::max<int64_t>(1, static_cast<int64_t>(baseline.memory * options.resolution_ratio));
  std::vector<OpWindow> windows =
      InherentWindows(trace, rep.static_bound, options.windows, options.window_ops);
  for (size_t i = 0; i < windows.size(); ++i) {
    if (progress) progress("Z3 windows", i, windows.size());
    WindowBound wb = BoundWindow(trace, windows[i], rep.static_bound.bytes - 1, hi, options.limits,
                                 nullptr, resolution);
    rep.proven_infeasible_below = std::max(rep.proven_infeasible_below, wb.infeasible_below);
    rep.windows.push_back(wb);
  }
  if (progress && !windows.empty()) progress("Z3 windows", windows.size(), windows.size());
  return rep;
}

}  // namespace dtr
