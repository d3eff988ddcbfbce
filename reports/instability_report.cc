#include "reports/instability_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <set>
#include <string>

#include "model/attribution.h"
#include "reports/atlas_report.h"
#include "reports/number_format.h"
#include "reports/report_headline.h"

namespace dtr {

namespace {

using nlohmann::ordered_json;

const std::string& StorageName(const Trace& trace, StorageId s) {
  return trace.tensors[trace.storages[s].root].name;
}

std::string RatioText(const ScanPoint& p) {
  return p.ratio ? p.ratio->text : fmt::format("{} B", p.budget);
}

ordered_json RatioJson(const ScanPoint& p) {
  if (p.ratio) return p.ratio->value;
  return nullptr;
}

std::string RatioText(const RunSpec& s) {
  if (s.budget) return fmt::format("{} B", *s.budget);
  return s.ratio ? s.ratio->text : "-";
}

ordered_json RatioJson(const RunSpec& s) {
  if (!s.budget && s.ratio) return s.ratio->value;
  return nullptr;
}

ordered_json Header(const char* command, const TraceSummary& summary,
                    const HeuristicSpec* heuristic, RuntimeKind runtime) {
  ordered_json j;
  j["command"] = command;
  j["log"] = summary.log;
  if (heuristic) j["heuristic"] = std::string(heuristic->name);
  j["runtime"] = std::string(RuntimeName(runtime));
  j["baseline_memory"] = summary.baseline.memory;
  j["baseline_compute"] = summary.baseline.compute;
  return j;
}

ordered_json PointJson(const ScanPoint& p) {
  ordered_json j;
  j["ratio"] = RatioJson(p);
  j["budget"] = p.budget;
  j["result"] = std::string(OutcomeName(p.outcome));
  j["overhead"] = p.overhead;
  j["evictions"] = p.evictions;
  j["distinct_evicted"] = p.distinct_evicted;
  j["evictions_per_storage"] = p.evictions_per_storage();
  j["heuristic_evictions"] = p.heuristic_evictions;
  j["distinct_heuristic_evicted"] = p.distinct_heuristic_evicted;
  j["budget_lo"] = p.budget_lo;
  j["budget_hi"] = p.budget_hi;
  if (p.regime >= 0) j["regime"] = p.regime;
  return j;
}

ordered_json BriefJson(const ScanPoint& p) {
  return {{"budget", p.budget},
          {"result", std::string(OutcomeName(p.outcome))},
          {"overhead", p.overhead},
          {"budget_lo", p.budget_lo},
          {"budget_hi", p.budget_hi}};
}

ordered_json BoundaryJson(const ScanBoundary& b) {
  ordered_json j;
  j["last_byte"] = b.last_byte;
  j["first_byte"] = b.first_byte;
  j["sharp"] = b.sharp();
  j["lower_zone_to"] = b.lower_zone_to;
  j["lower_zone_maximal"] = b.lower_zone_maximal;
  j["upper_zone_from"] = b.upper_zone_from;
  j["upper_zone_maximal"] = b.upper_zone_maximal;
  j["below"] = BriefJson(b.below);
  j["above"] = BriefJson(b.above);
  j["replays"] = b.replays;
  return j;
}

ordered_json RegimeJson(size_t id, const ScanRegime& g, const std::vector<ScanPoint>& points) {
  ordered_json j;
  j["id"] = id;
  j["result"] = std::string(OutcomeName(g.outcome));
  j["runs"] = g.runs;
  j["overhead"] = {g.overhead_min, g.overhead_max};
  j["evictions_per_storage"] = {g.per_storage_min, g.per_storage_max};
  ordered_json ranges = ordered_json::array();
  for (const GridRange& r : g.ranges)
    ranges.push_back({RatioJson(points[r.from]), RatioJson(points[r.to])});
  j["ratios"] = ranges;
  return j;
}

ordered_json CliffJson(const ScanCliff& c, const std::vector<ScanPoint>& points) {
  const ScanPoint &lo = points[c.lower], &hi = points[c.upper];
  ordered_json j;
  j["below"] = RatioJson(lo);
  j["above"] = RatioJson(hi);
  j["overhead_below"] = lo.overhead;
  j["overhead_above"] = hi.overhead;
  j["factor"] = c.factor;
  j["regime_below"] = lo.regime;
  j["regime_above"] = hi.regime;
  j["boundary"] = c.boundary ? BoundaryJson(*c.boundary) : ordered_json(nullptr);
  return j;
}

ordered_json InversionJson(const ScanInversion& v, const std::vector<ScanPoint>& points) {
  ordered_json j;
  j["feasible_below"] = RatioJson(points[v.feasible_below]);
  j["oom_from"] = RatioJson(points[v.oom_from]);
  j["oom_to"] = RatioJson(points[v.oom_to]);
  j["feasible_above"] = RatioJson(points[v.feasible_above]);
  if (v.lower_edge && v.upper_edge) {
    j["last_feasible_byte"] = v.lower_edge->last_byte;
    j["first_oom_byte"] = v.lower_edge->first_byte;
    j["last_oom_byte"] = v.upper_edge->last_byte;
    j["first_feasible_byte"] = v.upper_edge->first_byte;
  }
  j["lower_edge"] = v.lower_edge ? BoundaryJson(*v.lower_edge) : ordered_json(nullptr);
  j["upper_edge"] = v.upper_edge ? BoundaryJson(*v.upper_edge) : ordered_json(nullptr);
  return j;
}

}  // namespace

ordered_json CurveAnalysisJson(const ScanAnalysis& a, const std::vector<ScanPoint>& points) {
  ordered_json j;
  ordered_json regimes = ordered_json::array(), cliffs = ordered_json::array(),
               inversions = ordered_json::array();
  for (size_t i = 0; i < a.regimes.size(); ++i)
    regimes.push_back(RegimeJson(i, a.regimes[i], points));
  for (const ScanCliff& c : a.cliffs) cliffs.push_back(CliffJson(c, points));
  for (const ScanInversion& v : a.inversions) inversions.push_back(InversionJson(v, points));
  j["regimes"] = regimes;
  j["cliffs"] = cliffs;
  j["inversions"] = inversions;
  return j;
}

namespace {

std::string RangesText(const ScanRegime& g, const std::vector<ScanPoint>& points) {
  std::string s;
  for (const GridRange& r : g.ranges) {
    if (!s.empty()) s += ", ";
    s += r.from == r.to ? RatioText(points[r.from])
                        : RatioText(points[r.from]) + "-" + RatioText(points[r.to]);
  }
  return s;
}

std::string BriefText(const ScanPoint& p) {
  if (p.outcome == Outcome::kPass) return fmt::format("pass, overhead {:.4f}", p.overhead);
  return std::string(OutcomeName(p.outcome));
}

// `exact`: the boundary was read off the atlas, not found by replays.
void PrintBoundaryText(std::ostream& out, const ScanBoundary& b, const std::string& lower,
                       const std::string& upper, const char* indent, bool exact) {
  std::string source = exact            ? std::string("from the atlas")
                       : b.replays == 0 ? std::string("from the two runs' own intervals")
                                        : fmt::format("{} replays", b.replays);
  fmt::print(out, "{}byte {}: {};  byte {}: {}", indent, b.last_byte, BriefText(b.below),
             b.first_byte, BriefText(b.above));
  if (b.sharp()) {
    fmt::print(out,
               "  (sharp: all bytes from {} up to {} behave like {}, all from {} up to {} like {}; "
               "{})\n",
               lower, b.last_byte, lower, b.first_byte, upper, upper, source);
    return;
  }
  fmt::print(out, "  ({})\n", source);
  fmt::print(
      out, "{}  every byte from {} up to {} behaves like {}{}\n", indent, lower, b.lower_zone_to,
      lower,
      b.lower_zone_maximal ? "" : " (walk cut short; the switch above was found by bisection)");
  fmt::print(out, "{}  every byte from {} up to {} behaves like {}{}\n", indent, b.upper_zone_from,
             upper, upper, b.upper_zone_maximal ? "" : " (walk cut short)");
  if (b.lower_zone_maximal && b.upper_zone_maximal)
    fmt::print(out, "{}  mixed zone between them: {} bytes\n", indent,
               b.upper_zone_from - b.lower_zone_to - 1);
}

void PrintAnalysisText(std::ostream& out, const ScanAnalysis& a,
                       const std::vector<ScanPoint>& points, double factor, bool exact) {
  fmt::print(
      out,
      "regimes (same outcome; overhead and evictions per storage within {}x, single linkage)\n",
      factor);
  for (size_t i = 0; i < a.regimes.size(); ++i) {
    const ScanRegime& g = a.regimes[i];
    if (g.outcome == Outcome::kPass)
      fmt::print(out,
                 "  R{:<3} pass   {:>4} runs  overhead {:.3f}-{:.3f}  evictions/storage "
                 "{:.2f}-{:.2f}  ratios {}\n",
                 i, g.runs, g.overhead_min, g.overhead_max, g.per_storage_min, g.per_storage_max,
                 RangesText(g, points));
    else
      fmt::print(out, "  R{:<3} {:<6} {:>4} runs  ratios {}\n", i, OutcomeName(g.outcome), g.runs,
                 RangesText(g, points));
  }
  fmt::print(out, "cliffs (adjacent passing budgets, overhead differs by more than {}x): {}\n",
             factor, a.cliffs.size());
  for (const ScanCliff& c : a.cliffs) {
    const ScanPoint &lo = points[c.lower], &hi = points[c.upper];
    fmt::print(out, "  {} -> {}  overhead {:.4f} -> {:.4f}  ({:.2f}x, R{} -> R{})\n", RatioText(lo),
               RatioText(hi), lo.overhead, hi.overhead, c.factor, lo.regime, hi.regime);
    if (c.boundary)
      PrintBoundaryText(out, *c.boundary, RatioText(lo), RatioText(hi), "    ", exact);
  }
  fmt::print(out, "feasibility inversions (OOM budgets between feasible ones): {}\n",
             a.inversions.size());
  for (const ScanInversion& v : a.inversions) {
    fmt::print(out, "  feasible {} | OOM {}-{} | feasible {}\n",
               RatioText(points[v.feasible_below]), RatioText(points[v.oom_from]),
               RatioText(points[v.oom_to]), RatioText(points[v.feasible_above]));
    if (v.lower_edge)
      PrintBoundaryText(out, *v.lower_edge, RatioText(points[v.feasible_below]),
                        RatioText(points[v.oom_from]), "    ", exact);
    if (v.upper_edge)
      PrintBoundaryText(out, *v.upper_edge, RatioText(points[v.oom_to]),
                        RatioText(points[v.feasible_above]), "    ", exact);
  }
}

std::string GridInversionText(const ScanInversion& v, const std::vector<ScanPoint>& points) {
  return fmt::format("{} | {}-{} | {}", RatioText(points[v.feasible_below]),
                     RatioText(points[v.oom_from]), RatioText(points[v.oom_to]),
                     RatioText(points[v.feasible_above]));
}

}  // namespace

ordered_json ExactInversionsJson(const TraceSummary& summary, const BudgetAtlas& atlas,
                                 const std::vector<ExactInversion>& exact_inversions) {
  auto ratio = [&](int64_t bytes) { return AtlasRatio(summary, bytes); };
  ordered_json inversions = ordered_json::array();
  for (const ExactInversion& v : exact_inversions) {
    ordered_json k;
    k["feasible_below"] = ratio(v.last_feasible_byte);
    k["oom_from"] = ratio(v.first_oom_byte);
    k["oom_to"] = ratio(v.last_oom_byte);
    k["feasible_above"] = ratio(v.first_feasible_byte);
    k["last_feasible_byte"] = v.last_feasible_byte;
    k["first_oom_byte"] = v.first_oom_byte;
    k["last_oom_byte"] = v.last_oom_byte;
    k["first_feasible_byte"] = v.first_feasible_byte;
    k["oom_width"] = v.oom_width();
    k["intervals"] = v.last_interval - v.first_interval + 1;
    k["grid_inversion"] =
        v.grid_inversion ? ordered_json(*v.grid_inversion) : ordered_json(nullptr);
    k["missed_by_grid"] = v.missed_by_grid();
    const std::vector<AtlasInterval>& ivs = atlas.intervals;
    k["below"] = BriefJson(PointOfInterval(ivs[v.first_interval - 1], v.last_feasible_byte));
    k["above"] = BriefJson(PointOfInterval(ivs[v.last_interval + 1], v.first_feasible_byte));
    inversions.push_back(k);
  }
  return inversions;
}

namespace {

ordered_json ExactJson(const TraceSummary& summary, const ScanResult& scan) {
  const BudgetAtlas& atlas = *scan.atlas;
  ordered_json j;
  ordered_json a;
  a["budget_lo"] = atlas.lo;
  a["budget_hi"] = atlas.hi;
  a["intervals"] = atlas.intervals.size();
  a["runs"] = atlas.runs;
  a["distinct_behaviours"] = atlas.summary.distinct_behaviours;
  a["feasible_width"] = atlas.summary.feasible_width;
  a["infeasible_width"] = atlas.summary.infeasible_width;
  j["atlas"] = a;
  ordered_json changes = ordered_json::array();
  for (const ScanRegimeChange& c : scan.regime_changes) {
    ordered_json k;
    k["below"] = RatioJson(scan.points[c.lower]);
    k["above"] = RatioJson(scan.points[c.upper]);
    k["regime_below"] = scan.points[c.lower].regime;
    k["regime_above"] = scan.points[c.upper].regime;
    k["boundary"] = BoundaryJson(c.boundary);
    changes.push_back(k);
  }
  j["regime_changes"] = changes;
  j["exact_inversions"] = ExactInversionsJson(summary, atlas, scan.exact_inversions);
  return j;
}

void PrintExactText(std::ostream& out, const TraceSummary& summary, const ScanResult& scan) {
  const BudgetAtlas& atlas = *scan.atlas;
  const std::vector<ScanPoint>& points = scan.points;
  // Cliffs and inversion edges were printed with their boundaries above.
  std::set<std::pair<size_t, size_t>> shown;
  for (const ScanCliff& c : scan.analysis.cliffs) shown.insert({c.lower, c.upper});
  for (const ScanInversion& v : scan.analysis.inversions) {
    shown.insert({v.feasible_below, v.oom_from});
    shown.insert({v.oom_to, v.feasible_above});
  }
  std::vector<const ScanRegimeChange*> others;
  for (const ScanRegimeChange& c : scan.regime_changes)
    if (!shown.count({c.lower, c.upper})) others.push_back(&c);
  fmt::print(out, "other regime changes between adjacent budgets: {}\n", others.size());
  for (const ScanRegimeChange* c : others) {
    const ScanPoint &lo = points[c->lower], &hi = points[c->upper];
    fmt::print(out, "  {} -> {}  R{} -> R{}\n", RatioText(lo), RatioText(hi), lo.regime, hi.regime);
    PrintBoundaryText(out, c->boundary, RatioText(lo), RatioText(hi), "    ", true);
  }
  size_t missed = 0;
  for (const ExactInversion& v : scan.exact_inversions) missed += v.missed_by_grid();
  fmt::print(out,
             "exact: every budget from {} to {} bytes, {} intervals of identical runs ({} "
             "replays)\n",
             atlas.lo, atlas.hi, atlas.intervals.size(), atlas.runs);
  fmt::print(out, "feasibility inversions in the atlas: {} ({} missed by the grid)\n",
             scan.exact_inversions.size(), missed);
  for (const ExactInversion& v : scan.exact_inversions) {
    fmt::print(out, "  OOM [{}, {}]  {} bytes wide, ratios {:.9f} .. {:.9f}, {} interval{}\n",
               v.first_oom_byte, v.last_oom_byte, v.oom_width(),
               AtlasRatio(summary, v.first_oom_byte), AtlasRatio(summary, v.last_oom_byte),
               v.last_interval - v.first_interval + 1,
               v.last_interval == v.first_interval ? "" : "s");
    const AtlasInterval &below = atlas.intervals[v.first_interval - 1],
                        &above = atlas.intervals[v.last_interval + 1];
    fmt::print(out, "    byte {}: pass, overhead {:.4f};  byte {}: oom", v.last_feasible_byte,
               below.overhead, v.first_oom_byte);
    fmt::print(out, "  ...  byte {}: oom;  byte {}: pass, overhead {:.4f}\n", v.last_oom_byte,
               v.first_feasible_byte, above.overhead);
    if (v.grid_inversion)
      fmt::print(out, "    the grid's inversion {}\n",
                 GridInversionText(scan.analysis.inversions[*v.grid_inversion], points));
    else
      fmt::print(out, "    missed by the grid (no grid inversion has an OOM budget in it)\n");
  }
}

void PrintPointsText(std::ostream& out, const std::vector<ScanPoint>& points) {
  fmt::print(out, "{:>10} {:>14} {:>6} {:>10} {:>9} {:>8} {:>9} {:>6}\n", "ratio", "budget",
             "result", "overhead", "evictions", "distinct", "ev/stor", "regime");
  for (const ScanPoint& p : points) {
    // An OOM run's overhead (simrd's, at the failure) is no result: left blank.
    std::string overhead = p.outcome == Outcome::kOom ? "" : fmt::format("{:.4f}", p.overhead);
    fmt::print(out, "{:>10} {:>14} {:>6} {:>10} {:>9} {:>8} {:>9.2f} {:>6}\n", RatioText(p),
               p.budget, OutcomeName(p.outcome), overhead, p.evictions, p.distinct_evicted,
               p.evictions_per_storage(), fmt::format("R{}", p.regime));
  }
}

ordered_json StatsJson(const EvictionStats& s) {
  return {{"evictions", s.evictions}, {"distinct", s.distinct}, {"per_storage", s.per_storage}};
}

ordered_json ProfileJson(const RunProfile& p) {
  ordered_json j;
  j["ratio"] = RatioJson(p.spec);
  j["budget"] = p.budget;
  j["result"] = std::string(OutcomeName(p.outcome));
  j["overhead"] = p.overhead;
  j["clock"] = p.clock;
  j["decisions"] = p.decisions;
  j["all_evictions"] = StatsJson(p.all);
  j["heuristic_evictions"] = StatsJson(p.heuristic);
  return j;
}

ordered_json DivergenceJson(const Trace& trace, const FirstDivergence& f) {
  ordered_json j;
  j["kind"] = std::string(DivergenceKindName(f.kind));
  j["index"] = f.index;
  j["in"] = f.in ? ordered_json(std::string(1, f.in)) : ordered_json(nullptr);
  j["a"] = f.a ? DecisionPointJson(trace, *f.a) : ordered_json(nullptr);
  j["b"] = f.b ? DecisionPointJson(trace, *f.b) : ordered_json(nullptr);
  return j;
}

ordered_json TermsJson(const ScoreTerms& t) { return {t.cost, t.size, t.staleness}; }

std::string TermsText(const ScoreTerms& t) {
  return fmt::format("cost {}, size {}, staleness {}", t.cost, t.size,
                     t.staleness < 0 ? std::string("inf") : std::to_string(t.staleness));
}

std::string TermSetsText(const std::vector<std::vector<ScoreTerm>>& sets) {
  std::string s;
  for (const auto& set : sets) {
    if (!s.empty()) s += "; or ";
    for (size_t i = 0; i < set.size(); ++i)
      s += (i ? " and " : "") + std::string(ScoreTermName(set[i]));
  }
  return s;
}

std::string StatsText(const EvictionStats& s) {
  return fmt::format("{} evictions of {} storages ({:.2f} per storage)", s.evictions, s.distinct,
                     s.per_storage);
}

std::string RunName(char which, const RunProfile& p) {
  if (!p.spec.ratio) return fmt::format("{} (budget {})", which, p.budget);
  return fmt::format("{} (ratio {}, budget {})", which, RatioText(p.spec), p.budget);
}

ordered_json RankFlipJson(const Trace& trace, const RankFlipAt& r) {
  ordered_json f;
  f["a"] = DecisionPointJson(trace, r.a);
  f["b"] = DecisionPointJson(trace, r.b);
  f["x"] = StorageName(trace, r.a.chosen);
  f["y"] = StorageName(trace, r.b.chosen);
  f["y_evictable_in_a"] = r.y_evictable_in_a;
  f["x_evictable_in_b"] = r.x_evictable_in_b;
  f["y_evicted_in_a_at"] = r.y_evictable_in_a || r.y_evicted_in_a_at < 0
                               ? ordered_json(nullptr)
                               : ordered_json(r.y_evicted_in_a_at);
  f["x_evicted_in_b_at"] = r.x_evictable_in_b || r.x_evicted_in_b_at < 0
                               ? ordered_json(nullptr)
                               : ordered_json(r.x_evicted_in_b_at);
  if (!r.flip) {
    f["terms"] = nullptr;
    return f;
  }
  const RankFlip& k = *r.flip;
  f["terms"] = {{"x_in_a", TermsJson(k.x_in_a)},
                {"y_in_a", TermsJson(k.y_in_a)},
                {"x_in_b", TermsJson(k.x_in_b)},
                {"y_in_b", TermsJson(k.y_in_b)}};
  f["scores"] = {{"x_in_a", ScoreJson(k.x_score_a)},
                 {"y_in_a", ScoreJson(k.y_score_a)},
                 {"x_in_b", ScoreJson(k.x_score_b)},
                 {"y_in_b", ScoreJson(k.y_score_b)}};
  f["tie_in_a"] = k.tie_in_a;
  f["tie_in_b"] = k.tie_in_b;
  ordered_json sets = ordered_json::array();
  for (const auto& set : k.flipping_terms) {
    ordered_json names = ordered_json::array();
    for (ScoreTerm t : set) names.push_back(std::string(ScoreTermName(t)));
    sets.push_back(names);
  }
  f["flipping_terms"] = sets;
  return f;
}

void PrintRankFlipText(std::ostream& out, const Trace& trace, const RankFlipAt& r) {
  std::string x = StorageName(trace, r.a.chosen), y = StorageName(trace, r.b.chosen);
  fmt::print(out,
             "  a's decision {} / b's decision {} (program step {}, making room for {}): a evicted "
             "{}, b evicted {}\n",
             r.a.index, r.b.index, r.a.program_step, trace.tensors[r.a.tensor].name,
             StorageLabel(trace, r.a.chosen), StorageLabel(trace, r.b.chosen));
  if (!r.flip) {
    auto why = [](int64_t at) {
      return at >= 0 ? fmt::format(" (that run's decision {} had evicted it)", at) : std::string();
    };
    if (!r.y_evictable_in_a)
      fmt::print(out, "  {} was not evictable in run a then{}: the pools differed\n", y,
                 why(r.y_evicted_in_a_at));
    if (!r.x_evictable_in_b)
      fmt::print(out, "  {} was not evictable in run b then{}: the pools differed\n", x,
                 why(r.x_evicted_in_b_at));
    return;
  }
  const RankFlip& k = *r.flip;
  fmt::print(out, "  in run a: {} score {:.6g} ({}); {} score {:.6g} ({})\n", x, k.x_score_a,
             TermsText(k.x_in_a), y, k.y_score_a, TermsText(k.y_in_a));
  fmt::print(out, "  in run b: {} score {:.6g} ({}); {} score {:.6g} ({})\n", x, k.x_score_b,
             TermsText(k.x_in_b), y, k.y_score_b, TermsText(k.y_in_b));
  if (k.tie_in_a || k.tie_in_b) fmt::print(out, "  (equal scores: the pool order decided)\n");
  if (k.flipping_terms.empty())
    fmt::print(out, "  no change of terms reverses the order\n");
  else
    fmt::print(
        out, "  the order flips with the {} term{} alone (moved from run a's values to run b's)\n",
        TermSetsText(k.flipping_terms), k.flipping_terms.front().size() > 1 ? "s" : "");
}

}  // namespace

ordered_json ScanJson(const TraceSummary& summary, const ScanResult& scan) {
  ordered_json j = Header("scan", summary, scan.heuristic, scan.runtime);
  j["cliff_factor"] = scan.cliff_factor;
  j["headline"] = HeadlineJson(scan.headline);
  ordered_json points = ordered_json::array();
  for (const ScanPoint& p : scan.points) points.push_back(PointJson(p));
  j["points"] = points;
  ordered_json analysis = CurveAnalysisJson(scan.analysis, scan.points);
  for (auto& [k, v] : analysis.items()) j[k] = v;
  j["refine_replays"] = scan.refine_replays;
  j["exact"] = scan.atlas.has_value();
  if (scan.atlas) {
    ordered_json exact = ExactJson(summary, scan);
    for (auto& [k, v] : exact.items()) j[k] = v;
  }
  return j;
}

void PrintScanText(std::ostream& out, const TraceSummary& summary, const ScanResult& scan) {
  fmt::print(out, "{}  {} on {}, {} budgets", summary.log, scan.heuristic->name,
             RuntimeName(scan.runtime), scan.points.size());
  if (!scan.points.empty())
    fmt::print(out, " from {} to {}", RatioText(scan.points.front()),
               RatioText(scan.points.back()));
  fmt::print(out, "\n{}", HeadlineText(scan.headline, "  "));
  if (!scan.headline.worst_cliff && !scan.analysis.cliffs.empty())
    fmt::print(
        out,
        "                (the grid has {} cliff{} below, between budgets not known to the byte: "
        "--refine locates {})\n",
        scan.analysis.cliffs.size(), scan.analysis.cliffs.size() == 1 ? "" : "s",
        scan.analysis.cliffs.size() == 1 ? "it" : "them");
  PrintAnalysisText(out, scan.analysis, scan.points, scan.cliff_factor, scan.atlas.has_value());
  if (scan.refine_replays > 0) fmt::print(out, "refinement: {} replays\n", scan.refine_replays);
  if (scan.atlas) PrintExactText(out, summary, scan);
  fmt::print(out, "runs\n");
  PrintPointsText(out, scan.points);
}

ordered_json DiffJson(const TraceSummary& summary, const Trace& trace, const RunComparison& cmp) {
  ordered_json j = Header("diff", summary, cmp.a.spec.heuristic, cmp.a.spec.runtime);
  j.update(ComparisonJson(trace, cmp));
  return j;
}

ordered_json ComparisonJson(const Trace& trace, const RunComparison& cmp) {
  ordered_json j;
  j["a"] = ProfileJson(cmp.a);
  j["b"] = ProfileJson(cmp.b);
  j["overhead_ratio"] = cmp.overhead_ratio;
  j["jaccard"] = {{"all", cmp.jaccard_all}, {"heuristic", cmp.jaccard_heuristic}};
  j["first_divergence"] = DivergenceJson(trace, cmp.first);
  j["after_divergence"] = {{"decisions_a", cmp.after.after_a},
                           {"decisions_b", cmp.after.after_b},
                           {"aligned", cmp.after.aligned},
                           {"aligned_same_choice", cmp.after.aligned_same_choice},
                           {"differing", cmp.after.differing()}};
  j["first_rank_flip"] =
      cmp.first_rank_flip ? RankFlipJson(trace, *cmp.first_rank_flip) : ordered_json(nullptr);
  j["first_term_flip"] =
      cmp.first_term_flip ? RankFlipJson(trace, *cmp.first_term_flip) : ordered_json(nullptr);
  return j;
}

void PrintDiffText(std::ostream& out, const TraceSummary& summary, const Trace& trace,
                   const RunComparison& cmp) {
  fmt::print(out, "{}  {} on {}\n", summary.log, cmp.a.spec.heuristic->name,
             RuntimeName(cmp.a.spec.runtime));
  for (auto [which, p] : {std::pair{'a', &cmp.a}, std::pair{'b', &cmp.b}}) {
    fmt::print(out, "run {}: {}, overhead {:.4f}, {} decisions\n", RunName(which, *p),
               OutcomeName(p->outcome), p->overhead, p->decisions);
    fmt::print(out, "    all evictions (heuristic + eager, simrd's count): {}\n",
               StatsText(p->all));
    fmt::print(out, "    heuristic evictions only:                        {}\n",
               StatsText(p->heuristic));
  }
  fmt::print(out,
             "overhead ratio b/a {:.3f} (a/b {:.3f}); Jaccard of evicted sets: all {:.4f}, "
             "heuristic only {:.4f}\n",
             cmp.overhead_ratio, cmp.overhead_ratio > 0 ? 1 / cmp.overhead_ratio : 0.0,
             cmp.jaccard_all, cmp.jaccard_heuristic);
  const FirstDivergence& f = cmp.first;
  fmt::print(out, "first divergence: ");
  switch (f.kind) {
    case DivergenceKind::kNone:
      fmt::print(out, "none (same decisions, same outcome)\n");
      break;
    case DivergenceKind::kExtraDecision: {
      const DecisionPoint& d = f.in == 'a' ? *f.a : *f.b;
      const RunProfile& with = f.in == 'a' ? cmp.a : cmp.b;
      const RunProfile& without = f.in == 'a' ? cmp.b : cmp.a;
      fmt::print(out, "decision {} exists only in run {}\n", f.index, f.in);
      fmt::print(out,
                 "  event {}, clock {}, program step {}, depth {}: making room for {} ({} B) with "
                 "{} B in use:\n"
                 "  {} + {} > {} (run {}'s budget) but fits run {}'s budget {}\n",
                 d.event, d.clock, d.program_step, d.remat_depth, trace.tensors[d.tensor].name,
                 d.request, d.memory_usage, d.memory_usage, d.request, with.budget, f.in,
                 f.in == 'a' ? 'b' : 'a', without.budget);
      fmt::print(out, "  run {} evicted {} (score {}, {}); runner-up {}\n", f.in,
                 StorageLabel(trace, d.chosen), d.score, TermsText(d.terms),
                 d.runner_up >= 0 ? StorageLabel(trace, d.runner_up) : "none");
      break;
    }
    case DivergenceKind::kRankedDifferently:
      fmt::print(out, "decision {} (event {}) evicted {} in run a, {} in run b\n", f.index,
                 f.a->event, StorageLabel(trace, f.a->chosen), StorageLabel(trace, f.b->chosen));
      break;
    case DivergenceKind::kRunEnded: {
      const RunProfile& ended = f.in == 'a' ? cmp.a : cmp.b;
      fmt::print(out, "run {} ended ({}) after {} identical decisions, at event {}\n", f.in,
                 OutcomeName(ended.outcome), f.index, ended.events);
      break;
    }
  }
  fmt::print(out,
             "after it: run a {} decisions, run b {}; {} aligned, {} of them evicting the same "
             "storage; {} differ\n",
             cmp.after.after_a, cmp.after.after_b, cmp.after.aligned, cmp.after.aligned_same_choice,
             cmp.after.differing());
  if (cmp.first_rank_flip) {
    fmt::print(out, "first aligned decision ranked differently:\n");
    PrintRankFlipText(out, trace, *cmp.first_rank_flip);
  }
  if (cmp.first_term_flip && cmp.first_term_flip->a.index != cmp.first_rank_flip->a.index) {
    fmt::print(out,
               "first one where both storages were evictable in both runs (the scores decided):\n");
    PrintRankFlipText(out, trace, *cmp.first_term_flip);
  } else if (cmp.first_rank_flip && !cmp.first_term_flip) {
    fmt::print(out,
               "(none of the first {} differing pairs had both storages evictable in both runs)\n",
               kMaxRankFlipProbes);
  }
}

std::string DivergenceSummary(const Trace& trace, const RunComparison& c) {
  const FirstDivergence& f = c.first;
  std::string first;
  switch (f.kind) {
    case DivergenceKind::kNone:
      first = "no divergence (same decisions, same outcome)";
      break;
    case DivergenceKind::kExtraDecision: {
      const DecisionPoint& d = f.in == 'a' ? *f.a : *f.b;
      first = fmt::format(
          "decision {} exists only in run {} (event {}: {} in use + {} requested for {} > its "
          "budget, fits the other's)",
          f.index, f.in, d.event, d.memory_usage, d.request, trace.tensors[d.tensor].name);
      break;
    }
    case DivergenceKind::kRankedDifferently:
      first =
          fmt::format("decision {} (event {}) evicted {} in run a, {} in run b", f.index,
                      f.a->event, StorageName(trace, f.a->chosen), StorageName(trace, f.b->chosen));
      break;
    case DivergenceKind::kRunEnded:
      first = fmt::format("run {} ended ({}) after {} identical decisions", f.in,
                          OutcomeName(f.in == 'a' ? c.a.outcome : c.b.outcome), f.index);
      break;
  }
  std::string why;
  if (c.first_term_flip && c.first_term_flip->flip) {
    const RankFlip& k = *c.first_term_flip->flip;
    std::string sets;
    for (const std::vector<ScoreTerm>& set : k.flipping_terms) {
      if (!sets.empty()) sets += " or ";
      for (size_t i = 0; i < set.size(); ++i) {
        if (i > 0) sets += "+";
        sets += ScoreTermName(set[i]);
      }
    }
    why = fmt::format("; first choice decided by the scores: a's decision {} / b's {}, {}",
                      c.first_term_flip->a.index, c.first_term_flip->b.index,
                      sets.empty() ? std::string("no change of terms reverses the order")
                                   : "the order flips with the " + sets + " term alone");
  }
  return fmt::format(
      "{}; from there on, {} of the {} decisions ({} in run a, {} in run b) have no "
      "same-choice partner in the other run{}; all evictions: a {}, b {}",
      first, c.after.differing(), c.after.after_a + c.after.after_b, c.after.after_a,
      c.after.after_b, why, StatsText(c.a.all), StatsText(c.b.all));
}

ordered_json BlameJson(const TraceSummary& summary, const Trace& trace, const BlameResult& blame) {
  ordered_json j = Header("blame", summary, blame.run.spec.heuristic, blame.run.spec.runtime);
  j["run"] = ProfileJson(blame.run);
  j["against"] = blame.against ? ProfileJson(*blame.against) : ordered_json(nullptr);
  j["divergence"] =
      blame.divergence ? DivergenceJson(trace, *blame.divergence) : ordered_json(nullptr);
  j["goal"] = std::string(BlameGoalName(blame.goal));
  if (blame.goal == BlameGoal::kFaster) j["overhead_goal"] = blame.overhead_goal;
  j["decisions"] = blame.decisions;
  j["replays"] = blame.replays;
  j["evals"] = blame.evals;
  j["singles_tried"] = blame.singles_tried;
  j["pairs_tried"] = blame.pairs_tried;
  j["budget_exhausted"] = blame.budget_exhausted;
  ordered_json fixes = ordered_json::array();
  for (const BlameFix& f : blame.fixes) {
    ordered_json fj, ov = ordered_json::array();
    for (const DecisionOverride& o : f.overrides)
      ov.push_back({{"decision", o.index},
                    {"event", o.event},
                    {"clock", o.clock},
                    {"original", StorageName(trace, o.original)},
                    {"replacement", StorageName(trace, o.replacement)}});
    fj["overrides"] = ov;
    fj["result"] = std::string(OutcomeName(f.outcome));
    fj["overhead"] = f.overhead;
    fj["verified"] = f.verified;
    fixes.push_back(fj);
  }
  j["fixes"] = fixes;
  return j;
}

void PrintBlameText(std::ostream& out, const TraceSummary& summary, const Trace& trace,
                    const BlameResult& blame) {
  const RunProfile& r = blame.run;
  fmt::print(out, "{}  {} on {}\n", summary.log, r.spec.heuristic->name,
             RuntimeName(r.spec.runtime));
  fmt::print(out, "run: ratio {}, budget {}: {}, overhead {:.4f}, {} decisions\n",
             RatioText(r.spec), r.budget, OutcomeName(r.outcome), r.overhead, blame.decisions);
  if (blame.against)
    fmt::print(out, "against: ratio {}, budget {}: {}, overhead {:.4f}\n",
               RatioText(blame.against->spec), blame.against->budget,
               OutcomeName(blame.against->outcome), blame.against->overhead);
  if (blame.divergence)
    fmt::print(out, "first divergence from it: {} at decision {}\n",
               DivergenceKindName(blame.divergence->kind), blame.divergence->index);
  if (blame.goal == BlameGoal::kPass)
    fmt::print(out, "goal: make the run pass\n");
  else
    fmt::print(out, "goal: pass with overhead <= {:.4f}\n", blame.overhead_goal);
  fmt::print(out,
             "searched: {} replays ({} single overrides, {} pairs), {} heuristic evaluations plus "
             "computations{}\n",
             blame.replays, blame.singles_tried, blame.pairs_tried, GroupedInt(blame.evals),
             blame.budget_exhausted ? "; stopped at the cap (--max-replays, --max-evals)" : "");
  if (blame.fixes.empty()) {
    fmt::print(out, "no fix found\n");
    return;
  }
  fmt::print(out, "fixes ({} override{} each):\n", blame.fixes.front().overrides.size(),
             blame.fixes.front().overrides.size() == 1 ? "" : "s");
  for (size_t i = 0; i < blame.fixes.size(); ++i) {
    const BlameFix& f = blame.fixes[i];
    fmt::print(out, "  {}. {}, overhead {:.4f}, {}\n", i + 1, OutcomeName(f.outcome), f.overhead,
               f.verified ? "verified by replay" : "NOT reproduced by the verifying replay");
    for (const DecisionOverride& o : f.overrides)
      fmt::print(out, "     decision {} (event {}, clock {}): evict {} instead of {}\n", o.index,
                 o.event, o.clock, StorageLabel(trace, o.replacement),
                 StorageLabel(trace, o.original));
  }
}

ordered_json AblateJson(const TraceSummary& summary, const AblationResult& result) {
  ordered_json j = Header("ablate", summary, result.base.heuristic, result.runtime);
  j["cliff_factor"] = result.cliff_factor;
  j["max_evals"] = result.max_evals;
  j["run_work_limit"] = result.run_work_limit;
  j["stopped"] = result.stopped;
  auto scan_json = [](const AblationScan& a) {
    ordered_json s;
    s["heuristic"] = std::string(a.heuristic->name);
    s["terms"] = {{"cost", a.has_cost}, {"size", a.has_size}, {"staleness", a.has_staleness}};
    s["control"] = a.control;
    ordered_json points = ordered_json::array();
    for (const ScanPoint& p : a.points) points.push_back(PointJson(p));
    s["points"] = points;
    ordered_json analysis = CurveAnalysisJson(a.analysis, a.points);
    for (auto& [k, v] : analysis.items()) s[k] = v;
    return s;
  };
  j["base"] = scan_json(result.base);
  ordered_json abl = ordered_json::array();
  for (const AblationScan& a : result.ablations) abl.push_back(scan_json(a));
  j["ablations"] = abl;
  ordered_json verdicts = ordered_json::array();
  auto names = [](const std::vector<std::string_view>& v) {
    ordered_json a = ordered_json::array();
    for (std::string_view s : v) a.push_back(std::string(s));
    return a;
  };
  for (const TermVerdict& v : result.verdicts)
    verdicts.push_back({{"term", std::string(ScoreTermName(v.term))},
                        {"cliffs", std::string(SurvivalName(v.cliffs()))},
                        {"inversions", std::string(SurvivalName(v.inversions()))},
                        {"without", names(v.without)},
                        {"without_informative", names(v.without_informative)},
                        {"without_with_cliffs", names(v.without_with_cliffs)},
                        {"without_with_inversions", names(v.without_with_inversions)},
                        {"with", names(v.with)},
                        {"with_with_cliffs", names(v.with_with_cliffs)},
                        {"with_with_inversions", names(v.with_with_inversions)}});
  j["verdicts"] = verdicts;
  return j;
}

void PrintAblateText(std::ostream& out, const TraceSummary& summary, const AblationResult& result) {
  const std::vector<ScanPoint>& base_points = result.base.points;
  fmt::print(out, "{}  {} and its 16 ablations on {}, {} budgets", summary.log,
             result.base.heuristic->name, RuntimeName(result.runtime), base_points.size());
  if (!base_points.empty())
    fmt::print(out, " from {} to {}", RatioText(base_points.front()),
               RatioText(base_points.back()));
  fmt::print(out, ", cliff factor {}\n", result.cliff_factor);
  if (result.run_work_limit > 0)
    fmt::print(out, "{} of the {} runs stopped at their share of the cap (--max-evals): unknown\n",
               result.stopped, (1 + result.ablations.size()) * base_points.size());
  fmt::print(out, "{:<18} {:>4} {:>4} {:>5}  {:>4} {:>4} {:>6} {:>7}  {:>6} {:>10}  {}\n",
             "heuristic", "cost", "size", "stale", "pass", "oom", "thrash", "stopped", "cliffs",
             "inversions", "inversions (feasible | OOM | feasible)");
  auto row = [&](const AblationScan& a, bool base) {
    size_t passes = 0, ooms = 0, thrashes = 0, stops = 0;
    for (const ScanPoint& p : a.points) {
      passes += p.outcome == Outcome::kPass;
      ooms += p.outcome == Outcome::kOom;
      thrashes += p.outcome == Outcome::kThrash;
      stops += p.outcome == Outcome::kStopped;
    }
    std::string inv;
    for (const ScanInversion& v : a.analysis.inversions) {
      if (!inv.empty()) inv += ", ";
      inv += fmt::format("{} | {}-{} | {}", RatioText(a.points[v.feasible_below]),
                         RatioText(a.points[v.oom_from]), RatioText(a.points[v.oom_to]),
                         RatioText(a.points[v.feasible_above]));
    }
    fmt::print(out, "{:<18} {:>4} {:>4} {:>5}  {:>4} {:>4} {:>6} {:>7}  {:>6} {:>10}  {}\n",
               std::string(a.heuristic->name) + (base        ? " (base)"
                                                 : a.control ? " (ctrl)"
                                                             : ""),
               a.has_cost ? "x" : "-", a.has_size ? "x" : "-", a.has_staleness ? "x" : "-", passes,
               ooms, thrashes, stops, a.analysis.cliffs.size(), a.analysis.inversions.size(), inv);
  };
  row(result.base, true);
  for (const AblationScan& a : result.ablations) row(a, false);
  fmt::print(out,
             "per score term (AbRandom is a control, left out; an ablation needs 2+ passing "
             "budgets and none stopped to show either vanishes):\n");
  auto list = [](const std::vector<std::string_view>& v) {
    std::string s;
    for (std::string_view n : v) s += (s.empty() ? "" : ", ") + std::string(n);
    return s.empty() ? std::string("none") : s;
  };
  for (const TermVerdict& v : result.verdicts) {
    fmt::print(out,
               "  without {}: cliffs {} ({}), inversions {} ({}); {} of {} ablations without it "
               "pass at 2+ budgets, none stopped\n",
               ScoreTermName(v.term), SurvivalName(v.cliffs()), list(v.without_with_cliffs),
               SurvivalName(v.inversions()), list(v.without_with_inversions),
               v.without_informative.size(), v.without.size());
    fmt::print(out, "     with {}: cliffs in {} of {} ablations, inversions in {} of {}\n",
               ScoreTermName(v.term), v.with_with_cliffs.size(), v.with.size(),
               v.with_with_inversions.size(), v.with.size());
  }
}

}  // namespace dtr
