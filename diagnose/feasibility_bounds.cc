#include "diagnose/feasibility_bounds.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "checker/drivers/budget_choice.h"
#include "checker/drivers/sweep.h"
#include "checker/engine/engine.h"
#include "checker/proofs/eviction_script.h"
#include "diagnose/oom_classification.h"
#include "model/error.h"

namespace dtr {

namespace {

int Decimals(const std::string& text) {
  size_t dot = text.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
}

// The fine grid strictly between the coarse neighbours of `r` (r itself
// excluded): below it to find a smaller feasible ratio (unless `below` is
// false), above it to find the inversions the coarse grid steps over.
std::vector<Ratio> FineGrid(const Ratio& r, const std::vector<Ratio>& coarse,
                            const std::string& fine_step, bool below) {
  auto it = std::find_if(coarse.begin(), coarse.end(),
                         [&](const Ratio& c) { return c.value == r.value; });
  if (it == coarse.end()) return {};
  double step = ParseRatio(fine_step).value;
  std::vector<Ratio> out;
  auto between = [&](const Ratio& lo, const Ratio& hi) {
    int digits = std::max({Decimals(fine_step), Decimals(lo.text), Decimals(hi.text)});
    double from = lo.value + step, to = hi.value - step;
    if (from > to + step / 2) return;
    for (Ratio& x :
         ParseRatios(fmt::format("{:.{}f}:{:.{}f}:{}", from, digits, to, digits, fine_step)))
      out.push_back(std::move(x));
  };
  if (below && it != coarse.begin()) between(*(it - 1), r);
  if (it + 1 != coarse.end()) between(r, *(it + 1));
  return out;
}

}  // namespace

std::string_view WalkModeName(WalkMode mode) {
  switch (mode) {
    case WalkMode::kStep:
      return "step";
    case WalkMode::kGallop:
      return "gallop";
    case WalkMode::kBisect:
      return "bisect";
  }
  return "?";
}

WalkMode ParseWalkMode(const std::string& name) {
  for (WalkMode m : {WalkMode::kStep, WalkMode::kGallop, WalkMode::kBisect})
    if (WalkModeName(m) == name) return m;
  throw Error(fmt::format("unknown walk mode '{}' (expected step, gallop or bisect)", name));
}

void WalkDownBestSchedule(const Trace& trace, const Baseline& baseline,
                          const BoundsOptions& options, const VerifiedSchedule& start,
                          int64_t lower_bound, BoundsReport& report, const BoundsStatus& status) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point began = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - began).count(); };
  report.walk_mode = options.walk;
  report.best = start;
  report.walk.clear();
  report.walk_timed_out = false;
  report.walk_search_limited = false;
  const bool timed = std::isfinite(options.search_seconds);
  const int64_t resolution =
      std::max<int64_t>(1, static_cast<int64_t>(baseline.memory * options.resolution_ratio));
  // kBisect: the highest budget at which no script is known to fit (proven
  // below lower_bound, or a search that failed). Not a proof: a failed
  // search only narrows where the walk looks next.
  int64_t no_script_at = lower_bound - 1;
  // kGallop: how far below the best the next search asks.
  int64_t stride = resolution;
  while (true) {
    const int64_t best = report.best->budget;
    int64_t budget;
    if (options.walk != WalkMode::kBisect) {
      if (options.walk == WalkMode::kStep) stride = 1;
      if (best - 1 < lower_bound) break;  // the best schedule meets the proven bound: optimal
      budget = std::max(lower_bound, best - stride);
    } else {
      if (best - no_script_at <= std::max<int64_t>(1, resolution)) break;
      budget = no_script_at + (best - no_script_at) / 2;
    }
    if (static_cast<int64_t>(report.walk.size()) >= options.walk_searches) {
      report.walk_search_limited = true;
      break;
    }
    const double left = timed ? options.search_seconds - elapsed() : 0;
    if (timed && left <= 0) {
      report.walk_timed_out = true;
      break;
    }
    WitnessOptions wo;
    wo.runtime = options.runtime;
    wo.heuristics = options.heuristics;
    wo.counterfactuals = options.counterfactuals;
    wo.limits = options.limits;
    wo.seconds = left;  // 0 (untimed): no deadline for the search or its Z3 calls
    const std::string prefix =
        fmt::format("budget {} (ratio {:.6f}): ", budget,
                    static_cast<double>(budget) / static_cast<double>(baseline.memory));
    const Clock::time_point step_began = Clock::now();
    WitnessSearch search =
        FindScheduleWitness(trace, baseline.memory, budget, wo, [&](const std::string& s) {
          if (status) status(prefix + s);
        });
    WalkStep step;
    step.budget = budget;
    step.attempts = search.attempts.size();
    step.seconds = std::chrono::duration<double>(Clock::now() - step_began).count();
    if (!search.witness) {
      if (!search.attempts.empty())
        step.last_outcome = search.attempts.back().source + ": " + search.attempts.back().outcome;
      // A search cut short by the time limit (or a Z3 call cut to the time
      // left) says nothing about the budget.
      const bool out_of_time =
          (!search.attempts.empty() && search.attempts.back().outcome == "time limit") ||
          (timed && elapsed() >= options.search_seconds);
      report.walk.push_back(std::move(step));
      if (status) status(prefix + "no script found");
      if (out_of_time) {
        report.walk_timed_out = true;
        break;
      }
      if (options.walk == WalkMode::kBisect) {
        no_script_at = budget;
        continue;
      }
      if (budget == best - 1) break;  // nothing one byte below the best
      // A quarter of the stride; below the resolution, only the final
      // question is left: is there anything one byte below?
      stride = stride / 4 < resolution ? 1 : stride / 4;
      continue;
    }
    Witness& w = *search.witness;
    VerifiedSchedule v;
    v.source = w.source;
    v.description = w.description;
    v.asked_at = budget;
    v.budget = w.check.run.max_memory;
    // The script passed at `budget` with this peak; the claim is about the
    // peak itself, so check it there.
    v.script = std::move(w.script);
    v.check = CheckSchedule(trace, v.budget, v.script, options.runtime);
    if (!v.check.passed())
      throw Error(fmt::format(
          "internal error: the {} script found at budget {} fails at its own peak {}: {}", w.source,
          budget, v.budget, DescribeScheduleCheck(v.check)));
    step.found = true;
    step.source = w.source;
    step.description = w.description;
    step.peak = v.budget;
    report.walk.push_back(std::move(step));
    if (status) status(fmt::format("{}{} script with peak {}", prefix, w.source, v.budget));
    if (v.budget < best) report.best = std::move(v);
    stride = std::min<int64_t>(std::max(stride * 2, resolution), std::max<int64_t>(1, best / 4));
  }
  report.walk_seconds = elapsed();
}

void SearchPlannedSchedule(const Trace& trace, const Baseline& baseline,
                           const BoundsOptions& options, BoundsReport& report,
                           const BoundsStatus& status) {
  ScheduleSearchOptions so;
  so.runtime = options.runtime;
  so.seconds = std::isfinite(options.plan_seconds) ? options.plan_seconds : 0;  // 0: no limit
  so.max_work = options.plan_work;
  so.max_overhead = options.plan_max_overhead;
  so.jobs = options.jobs;
  report.plan_search = SearchRetentionPlans(trace, baseline, so, [&](const std::string& s) {
    if (status) status("checkpoint plan: " + s);
  });
  std::optional<PlannedSchedule>& found = report.plan_search->best;
  if (!found || (report.best && report.best->budget <= found->peak)) return;
  VerifiedSchedule v;
  v.source = "checkpoint plan";
  v.description = found->description;
  v.budget = found->peak;
  v.script = std::move(found->script);
  v.check = std::move(found->check);  // passed at exactly `budget`
  report.best = std::move(v);
}

BoundsReport ComputeBounds(const Trace& trace, const Baseline& baseline,
                           const BoundsOptions& options, const BoundsProgress& progress,
                           const BoundsStatus& status) {
  BoundsReport rep;
  rep.baseline_memory = baseline.memory;
  rep.grid = options.grid;
  rep.fine_step = options.fine_step;
  rep.static_bound = ComputeMemoryBound(trace);
  rep.proven_infeasible_below = rep.static_bound.bytes;
  std::vector<const HeuristicSpec*> heuristics = options.heuristics;
  if (heuristics.empty()) heuristics.push_back(&FindHeuristic("DTR"));
  if (options.plans_only) heuristics.clear();

  std::vector<Ratio> coarse;
  for (const Ratio& r : ParseRatios(options.grid))
    if (BudgetChoice::OfRatio(r, baseline.memory) >= rep.static_bound.bytes) coarse.push_back(r);

  auto spec_for = [&](const HeuristicSpec* h, const Ratio& r) {
    RunSpec s;
    s.heuristic = h;
    s.runtime = options.runtime;
    s.ratio = r;
    s.overhead_limit = options.overhead_limit;
    if (options.run_max_evals > 0) s.work_limit = options.run_max_evals;
    return s;
  };
  // A run where simrd stops with an assertion fails the whole farm (under
  // MPI as a plain InputError): the specs are then replayed one by one here,
  // on every rank alike, and such runs are left out and counted in `hb`. Any
  // other error is the command's.
  auto run_all = [&](const std::string& stage, const std::vector<RunSpec>& specs,
                     HeuristicBound& hb) {
    try {
      return RunMany(
          trace, baseline, specs, options.jobs,
          [&](size_t d, size_t t) {
            if (progress) progress(stage, d, t);
          },
          nullptr, 0, options.watch);
    } catch (const InputError&) {
      std::vector<RunRecord> runs;
      int32_t asserted = 0;
      for (const RunSpec& spec : specs) {
        try {
          runs.push_back(RunOne(trace, baseline, spec));
        } catch (const SimrdAssertionError& e) {
          ++asserted;
          if (!hb.simrd_assertion_at || spec.ratio->value < hb.simrd_assertion_at->value) {
            hb.simrd_assertion_at = *spec.ratio;
            hb.simrd_assertion = e.what();
          }
        }
      }
      if (asserted == 0) throw;  // not simrd's assertion: the farm's error stands
      hb.simrd_assertions += asserted;
      return runs;
    }
  };
  std::vector<RunRecord> passing;
  for (const HeuristicSpec* h : heuristics) {
    HeuristicBound hb;
    hb.heuristic = h;
    std::vector<RunSpec> specs;
    for (const Ratio& r : coarse) specs.push_back(spec_for(h, r));
    std::vector<RunRecord> runs = run_all(fmt::format("{} on the grid", h->name), specs, hb);
    if (!options.fine_step.empty()) {
      for (const RunRecord& rr : runs)
        if (rr.result.outcome == Outcome::kPass) {
          // When the coarse run just below stopped at the cap, the budgets in
          // between thrash alike (TreeLSTM: 9 of 9 stopped, a minute of
          // runs): not refined below.
          const RunRecord* neighbour = nullptr;  // the coarse run just below
          for (const RunRecord& other : runs)
            if (other.spec.ratio->value < rr.spec.ratio->value &&
                (!neighbour || other.spec.ratio->value > neighbour->spec.ratio->value))
              neighbour = &other;
          const bool below = !neighbour || neighbour->result.outcome != Outcome::kStopped;
          std::vector<RunSpec> fine;
          for (const Ratio& r : FineGrid(*rr.spec.ratio, coarse, options.fine_step, below))
            fine.push_back(spec_for(h, r));
          std::vector<RunRecord> more =
              run_all(fmt::format("{} on the fine grid", h->name), fine, hb);
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
      if (rr.result.outcome == Outcome::kStopped) {
        hb.stopped.push_back(*rr.spec.ratio);
      } else if (rr.result.outcome == Outcome::kPass) {
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
    hb.runs += hb.simrd_assertions;
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
    v.description = fmt::format("{} at ratio {}", v.heuristic->name, v.ratio.text);
    v.budget = sr.run.max_memory;
    v.script = std::move(sr.script);
    v.check = CheckSchedule(trace, v.budget, v.script, options.runtime);
    if (!v.check.passed())
      throw Error(
          fmt::format("internal error: the script of {} at ratio {} fails at its own peak: {}",
                      v.heuristic->name, v.ratio.text, DescribeScheduleCheck(v.check)));
    rep.grid_best = v;
    rep.best = std::move(v);
  }
  if (options.plan_seconds > 0) {
    if (progress) progress("checkpoint plans", 0, 1);
    SearchPlannedSchedule(trace, baseline, options, rep, status);
  }
  if (rep.grid_best && options.walk_searches > 0 && options.search_seconds > 0 &&
      !options.plans_only) {
    if (rep.best->budget < rep.grid_best->budget) {
      rep.walk_skipped = true;
    } else {
      if (progress) progress("walk-down", 0, 1);
      WalkDownBestSchedule(trace, baseline, options, *rep.grid_best, rep.proven_infeasible_below,
                           rep, status);
    }
  }

  int64_t hi = rep.best ? rep.best->budget : baseline.memory;
  int64_t resolution =
      std::max<int64_t>(1, static_cast<int64_t>(baseline.memory * options.resolution_ratio));
  // The keep-or-recompute cut raises the proven bound (checker/proofs/cut_bound.h).
  if (options.cut_seconds > 0) {
    if (progress) progress("keep-or-recompute cut", 0, 1);
    CutOptions co = CutOptionsFor(options.runtime);
    // Finer than the windows: the cut is cheap where it raises the bound most.
    co.resolution = std::max<int64_t>(1, baseline.memory / 1'000'000);
    co.seconds = options.cut_seconds;
    rep.cut = ComputeCutBound(trace, rep.static_bound, hi, co);
    if (rep.cut->bytes > rep.proven_infeasible_below) {
      rep.proven_infeasible_below = rep.cut->bytes;
      rep.lower_bound_argument = BoundArgument::kCut;
    }
    if (progress) progress("keep-or-recompute cut", 1, 1);
  }
  // Z3 windows raise the proven bound: bisect each between the bound so far
  // and the best known schedule.
  std::vector<OpWindow> windows =
      InherentWindows(trace, rep.static_bound, options.windows, options.window_ops);
  const int64_t window_lo = rep.proven_infeasible_below - 1;
  for (size_t i = 0; i < windows.size(); ++i) {
    if (progress) progress("Z3 windows", i, windows.size());
    WindowBound wb =
        BoundWindow(trace, windows[i], window_lo, hi, options.limits, nullptr, resolution);
    if (wb.infeasible_below > rep.proven_infeasible_below) {
      rep.proven_infeasible_below = wb.infeasible_below;
      rep.lower_bound_argument = BoundArgument::kWindow;
      rep.lower_bound_window = wb.window;
    }
    rep.windows.push_back(wb);
  }
  if (progress && !windows.empty()) progress("Z3 windows", windows.size(), windows.size());
  return rep;
}

}  // namespace dtr
