#include "diagnose/atlas_coverage.h"

#include <fmt/core.h>

#include <algorithm>

#include "model/error.h"

namespace dtr {

namespace {

int ReasonRank(WindowReason r) {
  switch (r) {
    case WindowReason::kOutcomeChange:
      return 0;
    case WindowReason::kAboveFirstPass:
      return 1;
    case WindowReason::kBelowFirstPass:
      return 2;
  }
  return 3;
}

// The windows between adjacent distinct grid budgets, in walk order.
std::vector<AtlasWindow> PlanWindows(const std::vector<ScanPoint>& grid) {
  std::vector<std::pair<int64_t, Outcome>> budgets;  // distinct, increasing
  for (const ScanPoint& p : grid) {
    if (!budgets.empty() && p.budget < budgets.back().first)
      throw Error("the atlas windows need grid points in increasing budget order");
    if (budgets.empty() || p.budget != budgets.back().first) budgets.push_back({p.budget, p.outcome});
  }
  if (budgets.size() < 2) throw Error("an atlas needs at least two distinct grid budgets");
  size_t first_pass = budgets.size();
  for (size_t i = 0; i < budgets.size() && first_pass == budgets.size(); ++i)
    if (budgets[i].second == Outcome::kPass) first_pass = i;
  std::vector<AtlasWindow> windows;
  for (size_t i = 0; i + 1 < budgets.size(); ++i) {
    AtlasWindow w;
    w.lo = budgets[i].first;
    w.hi = i + 2 == budgets.size() ? budgets[i + 1].first : budgets[i + 1].first - 1;
    w.reason = budgets[i].second != budgets[i + 1].second ? WindowReason::kOutcomeChange
               : i >= first_pass                          ? WindowReason::kAboveFirstPass
                                                          : WindowReason::kBelowFirstPass;
    windows.push_back(w);
  }
  std::stable_sort(windows.begin(), windows.end(), [](const AtlasWindow& a, const AtlasWindow& b) {
    if (a.reason != b.reason) return ReasonRank(a.reason) < ReasonRank(b.reason);
    return a.reason == WindowReason::kBelowFirstPass ? a.lo > b.lo : a.lo < b.lo;
  });
  return windows;
}

bool SameRun(const AtlasInterval& a, const AtlasInterval& b) {
  return a.run_lo == b.run_lo && a.run_hi == b.run_hi;
}

}  // namespace

std::string_view WindowReasonName(WindowReason r) {
  switch (r) {
    case WindowReason::kOutcomeChange:
      return "outcome change";
    case WindowReason::kAboveFirstPass:
      return "above the first pass";
    case WindowReason::kBelowFirstPass:
      return "below the first pass";
  }
  return "?";
}

int64_t AtlasCoverage::covered() const {
  int64_t bytes = 0;
  for (const BudgetAtlas& s : sections) bytes += s.hi - s.lo + 1;
  return bytes;
}

std::optional<size_t> AtlasCoverage::SectionAt(int64_t budget) const {
  for (size_t k = 0; k < sections.size(); ++k)
    if (sections[k].lo <= budget && budget <= sections[k].hi) return k;
  return std::nullopt;
}

std::vector<std::pair<int64_t, int64_t>> AtlasCoverage::Gaps() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t from = lo;
  for (const BudgetAtlas& s : sections) {
    if (from < s.lo) out.push_back({from, s.lo - 1});
    from = s.hi + 1;
  }
  if (from <= hi) out.push_back({from, hi});
  return out;
}

std::vector<std::pair<int64_t, int64_t>> AtlasCoverage::Infeasible() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const BudgetAtlas& s : sections) {
    bool open = false;
    for (const AtlasInterval& iv : s.intervals) {
      if (iv.feasible()) {
        open = false;
        continue;
      }
      if (open)
        out.back().second = iv.hi;
      else
        out.push_back({iv.lo, iv.hi});
      open = true;
    }
  }
  return out;
}

AtlasCoverage WalkAtlasWithin(const Trace& trace, const Baseline& baseline, const RunSpec& spec,
                              const std::vector<ScanPoint>& grid, AtlasCap cap, int jobs,
                              const ProgressFn& progress) {
  if (!cap.any()) throw Error("the atlas needs a cap of replays or heuristic evaluations");
  AtlasCoverage c;
  c.windows = PlanWindows(grid);
  c.lo = grid.front().budget;
  c.hi = grid.back().budget;
  c.cap = cap;
  // Thousandths of the cap spent: its larger part.
  auto spent = [&](size_t runs, int64_t evals) {
    return static_cast<size_t>(std::min(1.0, cap.Spent(runs, evals)) * 1000);
  };
  // The intervals walked in each window, by window (walk order).
  std::vector<std::vector<AtlasInterval>> walked(c.windows.size());
  for (size_t k = 0; k < c.windows.size(); ++k) {
    AtlasWindow& w = c.windows[k];
    if ((cap.runs > 0 && c.replays >= cap.runs) || (cap.evals > 0 && c.evals >= cap.evals)) {
      c.budget_ran_out = true;
      break;
    }
    const AtlasCap left{.runs = cap.runs > 0 ? cap.runs - c.replays : 0,
                        .evals = cap.evals > 0 ? cap.evals - c.evals : 0};
    const size_t runs_before = c.replays;
    const int64_t evals_before = c.evals;
    BudgetAtlas a = BuildAtlas(
        trace, baseline, spec, w.lo, w.hi, jobs,
        [&](int64_t, int64_t, size_t runs, int64_t evals) {
          if (progress) progress(spent(runs_before + runs, evals_before + evals), 1000);
        },
        left);
    w.replays = a.runs;
    w.walked_bytes = a.covered;
    c.replays += a.runs;
    c.evals += a.evals;
    if (a.stopped) {
      walked[k] = std::move(a.prefix);
      c.budget_ran_out = true;
      break;
    }
    walked[k] = std::move(a.intervals);
  }
  if (progress) progress(spent(c.replays, c.evals), 1000);

  // Join the walked parts of windows into maximal sections, in budget order.
  std::vector<size_t> order;
  for (size_t k = 0; k < c.windows.size(); ++k)
    if (c.windows[k].walked_bytes > 0) order.push_back(k);
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return c.windows[x].lo < c.windows[y].lo; });
  for (size_t k : order) {
    const AtlasWindow& w = c.windows[k];
    const int64_t end = w.lo + w.walked_bytes - 1;
    if (c.sections.empty() || c.sections.back().hi + 1 != w.lo) {
      BudgetAtlas s;
      s.lo = w.lo;
      s.hi = w.lo - 1;
      c.sections.push_back(std::move(s));
    }
    BudgetAtlas& s = c.sections.back();
    for (const AtlasInterval& iv : walked[k]) {
      if (!s.intervals.empty() && SameRun(s.intervals.back(), iv) && s.intervals.back().hi + 1 == iv.lo)
        s.intervals.back().hi = iv.hi;
      else
        s.intervals.push_back(iv);
    }
    s.hi = end;
    s.runs += w.replays;
  }
  for (BudgetAtlas& s : c.sections) {
    s.covered = s.hi - s.lo + 1;
    s.summary = SummarizeAtlas(s.intervals);
  }
  return c;
}

std::vector<AtlasCliff> FindAtlasCliffs(const AtlasCoverage& coverage, double cliff_factor) {
  std::vector<AtlasCliff> out;
  for (size_t k = 0; k < coverage.sections.size(); ++k) {
    const std::vector<AtlasInterval>& ivs = coverage.sections[k].intervals;
    for (size_t i = 0; i + 1 < ivs.size(); ++i) {
      const AtlasInterval &p = ivs[i], &q = ivs[i + 1];
      if (!p.feasible() || !q.feasible() || !IsCliff(p.overhead, q.overhead, cliff_factor)) continue;
      out.push_back({k, i, p.hi, q.lo, p.overhead, q.overhead, OverheadFactor(p.overhead, q.overhead)});
    }
  }
  return out;
}

}  // namespace dtr
