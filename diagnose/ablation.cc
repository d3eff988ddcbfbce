#include "diagnose/ablation.h"

#include <algorithm>

#include "model/error.h"

namespace dtr {

namespace {

AblationScan Describe(const HeuristicSpec& h) {
  AblationScan a;
  a.heuristic = &h;
  a.control = h.cost == CostTerm::kRandom;
  a.has_cost = h.cost != CostTerm::kOne && h.cost != CostTerm::kRandom;
  a.has_size = h.divide_by_size;
  a.has_staleness = h.divide_by_staleness;
  return a;
}

bool Has(const AblationScan& a, ScoreTerm term) {
  switch (term) {
    case ScoreTerm::kCost:
      return a.has_cost;
    case ScoreTerm::kSize:
      return a.has_size;
    case ScoreTerm::kStaleness:
      return a.has_staleness;
  }
  return false;
}

}  // namespace

std::string_view SurvivalName(Survival s) {
  switch (s) {
    case Survival::kSurvive:
      return "survive";
    case Survival::kVanish:
      return "vanish";
    case Survival::kUntested:
      return "untested";
  }
  return "?";
}

std::vector<TermVerdict> JudgeTerms(const std::vector<AblationScan>& ablations) {
  std::vector<TermVerdict> out;
  for (ScoreTerm term : {ScoreTerm::kCost, ScoreTerm::kSize, ScoreTerm::kStaleness}) {
    TermVerdict v;
    v.term = term;
    for (const AblationScan& a : ablations) {
      if (a.control) continue;
      bool cliffs = !a.analysis.cliffs.empty(), inversions = !a.analysis.inversions.empty();
      size_t passing = 0, stopped = 0;
      for (const ScanPoint& p : a.points) {
        passing += p.outcome == Outcome::kPass;
        stopped += p.outcome == Outcome::kStopped;
      }
      std::string_view name = a.heuristic->name;
      if (Has(a, term)) {
        v.with.push_back(name);
        if (cliffs) v.with_with_cliffs.push_back(name);
        if (inversions) v.with_with_inversions.push_back(name);
      } else {
        v.without.push_back(name);
        if (passing >= 2 && stopped == 0) v.without_informative.push_back(name);
        if (cliffs) v.without_with_cliffs.push_back(name);
        if (inversions) v.without_with_inversions.push_back(name);
      }
    }
    out.push_back(v);
  }
  return out;
}

size_t AblateRuns(size_t ratios) { return (1 + AblationNames().size()) * ratios; }

int64_t AblateRunWorkLimit(int64_t max_evals, size_t runs) {
  if (max_evals <= 0) return 0;
  return std::max<int64_t>(1, max_evals / static_cast<int64_t>(std::max<size_t>(runs, 1)));
}

AblationResult Ablate(const Trace& trace, const Baseline& baseline,
                      const std::vector<Ratio>& ratios, const ScanOptions& options,
                      int64_t max_evals, const ProgressFn& progress) {
  if (!options.heuristic) throw Error("ablate needs a base heuristic");
  std::vector<Ratio> sorted = ratios;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Ratio& a, const Ratio& b) { return a.value < b.value; });
  std::vector<const HeuristicSpec*> heuristics{options.heuristic};
  for (std::string_view name : AblationNames()) heuristics.push_back(&FindHeuristic(name));
  // One flat sweep over every (heuristic, ratio), for the thread pool.
  const int64_t run_limit = AblateRunWorkLimit(max_evals, AblateRuns(sorted.size()));
  std::vector<RunSpec> specs;
  for (const HeuristicSpec* h : heuristics)
    for (const Ratio& r : sorted) {
      RunSpec s = RunSpecOf(options);
      s.heuristic = h;
      s.work_limit.reset();
      if (run_limit > 0) s.work_limit = run_limit;
      s.ratio = r;
      specs.push_back(s);
    }
  std::vector<RunRecord> runs =
      RunMany(trace, baseline, specs, options.jobs, progress, nullptr, 0, options.watch);
  AblationResult out;
  out.runtime = options.runtime;
  out.cliff_factor = options.cliff_factor;
  out.max_evals = std::max<int64_t>(max_evals, 0);
  out.run_work_limit = run_limit;
  for (const RunRecord& r : runs) out.stopped += r.result.outcome == Outcome::kStopped;
  for (size_t k = 0; k < heuristics.size(); ++k) {
    AblationScan a = Describe(*heuristics[k]);
    for (size_t i = 0; i < sorted.size(); ++i)
      a.points.push_back(MakeScanPoint(runs[k * sorted.size() + i]));
    a.analysis = AnalyzeScan(a.points, options.cliff_factor);
    if (k == 0)
      out.base = std::move(a);
    else
      out.ablations.push_back(std::move(a));
  }
  out.verdicts = JudgeTerms(out.ablations);
  return out;
}

}  // namespace dtr
