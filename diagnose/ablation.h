// Which score term carries an instability: the scan is rerun with simrd's
// sixteen ablation heuristics (heuristic/ablation.py), each of which keeps a
// subset of the three terms of DTR's score - a cost (e*, equivalence class or
// local compute), the size, the staleness. An ablation is "without" a term
// when its score lacks it (its name lacks E/Eq/Local, Size or Stale). AbRandom
// lacks all three and is reported as a control, outside the verdicts.
#pragma once

#include <string_view>
#include <vector>

#include "diagnose/instability_scan.h"
#include "diagnose/score_terms.h"

namespace dtr {

struct AblationScan {
  const HeuristicSpec* heuristic = nullptr;
  bool has_cost = false, has_size = false, has_staleness = false;
  bool control = false;  // AbRandom
  std::vector<ScanPoint> points;
  ScanAnalysis analysis;
};

// Whether cliffs and inversions are still found by the ablations that lack a
// term. Only an ablation that passes at two budgets or more of the grid, and
// has no run stopped by the work cap (a stopped run could hide either), can
// show that they vanish; if no ablation without the term is such, the
// verdict is "untested" rather than "vanish".
enum class Survival { kSurvive, kVanish, kUntested };
std::string_view SurvivalName(Survival s);  // "survive", "vanish", "untested"

struct TermVerdict {
  ScoreTerm term = ScoreTerm::kCost;
  std::vector<std::string_view> without;  // ablations lacking the term (control excluded)
  std::vector<std::string_view> without_informative;  // those passing at 2+ budgets, none stopped
  std::vector<std::string_view> without_with_cliffs, without_with_inversions;
  std::vector<std::string_view> with;  // ablations keeping it
  std::vector<std::string_view> with_with_cliffs, with_with_inversions;
  Survival cliffs() const { return Judge(without_with_cliffs); }
  Survival inversions() const { return Judge(without_with_inversions); }

 private:
  Survival Judge(const std::vector<std::string_view>& showing) const {
    if (!showing.empty()) return Survival::kSurvive;
    return without_informative.empty() ? Survival::kUntested : Survival::kVanish;
  }
};

// The cost of an ablation in all, by default: its heuristic evaluations plus
// computations, shared evenly by its runs (each stops at its share, as
// "stopped": the ablations thrash at low budgets, for minutes on the public
// traces). A count, so the same runs stop on any machine.
inline constexpr int64_t kDefaultAblateEvals = 4'000'000'000;

struct AblationResult {
  RuntimeKind runtime = RuntimeKind::kV2EagerOptimized;
  double cliff_factor = 0;
  int64_t max_evals = 0;       // the cap in all (0: none)
  int64_t run_work_limit = 0;  // each run's share of it (0: none)
  size_t stopped = 0;          // runs stopped at their share, base included
  AblationScan base;  // the heuristic of `options` (e.g. DTR), for reference
  std::vector<AblationScan> ablations;
  std::vector<TermVerdict> verdicts;  // cost, size, staleness
};

// The runs of an ablation over `ratios` grid points: the base heuristic's
// and each ablation's, at every point.
size_t AblateRuns(size_t ratios);

// Each run's share of `max_evals` (0: none) among `runs` runs: at least 1.
int64_t AblateRunWorkLimit(int64_t max_evals, size_t runs);

// Sweeps `ratios` with options.heuristic and every ablation (no refinement),
// each run stopped at its share of `max_evals` (0: no cap; options.work_limit
// is replaced by it).
AblationResult Ablate(const Trace& trace, const Baseline& baseline,
                      const std::vector<Ratio>& ratios, const ScanOptions& options,
                      int64_t max_evals, const ProgressFn& progress = nullptr);

// The verdicts from finished ablation scans. Pure.
std::vector<TermVerdict> JudgeTerms(const std::vector<AblationScan>& ablations);

}  // namespace dtr
