#include "reports/atlas_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <string>

#include "reports/number_format.h"

namespace dtr {

double AtlasRatio(const TraceSummary& summary, int64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(summary.baseline.memory);
}

namespace {

std::string Results(const FeasibilityHole& h) {
  if (h.has_oom && h.has_thrash) return "oom+thrash";
  return h.has_oom ? "oom" : "thrash";
}

// The index of the band holding each interval.
std::vector<size_t> BandOfInterval(const BudgetAtlas& atlas) {
  std::vector<size_t> band(atlas.intervals.size());
  for (size_t b = 0; b < atlas.summary.bands.size(); ++b)
    for (size_t i = atlas.summary.bands[b].first; i <= atlas.summary.bands[b].last; ++i) band[i] = b;
  return band;
}

template <class T>
nlohmann::ordered_json OptionalBytes(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json AtlasIntervalJson(const TraceSummary& summary, const AtlasInterval& iv) {
  auto ratio = [&](int64_t b) { return AtlasRatio(summary, b); };
  return {{"budget_lo", iv.lo},
          {"budget_hi", iv.hi},
          {"width", iv.width()},
          {"ratio_lo", ratio(iv.lo)},
          {"ratio_hi", ratio(iv.hi)},
          {"run_budget_lo", iv.run_lo},
          {"run_budget_hi", iv.run_hi},
          {"result", std::string(OutcomeName(iv.behaviour.outcome))},
          {"overhead", iv.overhead},
          {"clock", iv.behaviour.clock},
          {"remat_compute", iv.remat_compute},
          {"heuristic_evals", iv.heuristic_evals},
          {"heuristic_evictions", iv.behaviour.heuristic_evictions},
          {"distinct_heuristic_evicted", iv.distinct_heuristic_evicted},
          {"evictions", iv.behaviour.evictions},
          {"distinct_evicted", iv.behaviour.distinct_evicted},
          {"evictions_per_evicted", iv.evictions_per_evicted}};
}

nlohmann::ordered_json AtlasJson(const TraceSummary& summary, const RunSpec& spec, const BudgetAtlas& atlas) {
  using J = nlohmann::ordered_json;
  auto ratio = [&](int64_t b) { return AtlasRatio(summary, b); };
  auto optional_ratio = [&](const std::optional<int64_t>& b) { return b ? J(ratio(*b)) : J(nullptr); };
  const AtlasSummary& s = atlas.summary;
  J j;
  j["log"] = summary.log;
  j["heuristic"] = std::string(spec.heuristic->name);
  j["runtime"] = std::string(RuntimeName(spec.runtime));
  j["baseline_memory"] = summary.baseline.memory;
  j["baseline_compute"] = summary.baseline.compute;
  if (spec.overhead_limit) j["overhead_limit"] = *spec.overhead_limit;
  j["seed"] = spec.seed;
  j["budget_lo"] = atlas.lo;
  j["budget_hi"] = atlas.hi;
  j["ratio_lo"] = ratio(atlas.lo);
  j["ratio_hi"] = ratio(atlas.hi);
  j["runs"] = atlas.runs;
  j["heuristic_evals"] = atlas.evals;
  if (atlas.resumed > 0) j["resumed"] = atlas.resumed;
  if (atlas.asked_hi) {
    J stop;
    stop["asked_budget_hi"] = *atlas.asked_hi;
    stop["asked_ratio_hi"] = ratio(*atlas.asked_hi);
    stop["max_runs"] = atlas.cap.runs;
    stop["max_evals"] = atlas.cap.evals;
    j["stopped_at_cap"] = std::move(stop);
  }

  J sum;
  sum["intervals"] = s.intervals;
  sum["distinct_behaviours"] = s.distinct_behaviours;
  sum["distinct_overheads"] = s.distinct_overheads;
  sum["bands"] = s.bands.size();
  sum["feasible_width"] = s.feasible_width;
  sum["infeasible_width"] = s.infeasible_width;
  sum["smallest_feasible"] = OptionalBytes(s.smallest_feasible);
  sum["smallest_feasible_ratio"] = optional_ratio(s.smallest_feasible);
  sum["largest_oom"] = OptionalBytes(s.largest_oom);
  sum["largest_oom_ratio"] = optional_ratio(s.largest_oom);
  sum["largest_infeasible"] = OptionalBytes(s.largest_infeasible);
  sum["largest_infeasible_ratio"] = optional_ratio(s.largest_infeasible);
  J holes = J::array();
  for (const FeasibilityHole& h : s.holes)
    holes.push_back({{"budget_lo", h.lo},
                     {"budget_hi", h.hi},
                     {"width", h.width()},
                     {"ratio_lo", ratio(h.lo)},
                     {"ratio_hi", ratio(h.hi)},
                     {"result", Results(h)},
                     {"first_interval", h.first},
                     {"last_interval", h.last}});
  sum["holes"] = std::move(holes);
  j["summary"] = std::move(sum);

  std::vector<size_t> band = BandOfInterval(atlas);
  J intervals = J::array();
  for (size_t i = 0; i < atlas.intervals.size(); ++i) {
    const AtlasInterval& iv = atlas.intervals[i];
    J k = AtlasIntervalJson(summary, iv);
    k["band"] = band[i];
    intervals.push_back(std::move(k));
  }
  j["intervals"] = std::move(intervals);
  J bands = J::array();
  for (const AtlasBand& b : s.bands) {
    const AtlasInterval& iv = atlas.intervals[b.first];
    bands.push_back({{"budget_lo", b.lo},
                     {"budget_hi", b.hi},
                     {"width", b.width()},
                     {"ratio_lo", ratio(b.lo)},
                     {"ratio_hi", ratio(b.hi)},
                     {"first_interval", b.first},
                     {"last_interval", b.last},
                     {"result", std::string(OutcomeName(iv.behaviour.outcome))},
                     {"overhead", iv.overhead}});
  }
  j["bands"] = std::move(bands);
  return j;
}

void PrintAtlasCsv(std::ostream& out, const TraceSummary& summary, const BudgetAtlas& atlas) {
  fmt::print(out,
             "budget_lo,budget_hi,width,ratio_lo,ratio_hi,run_budget_lo,run_budget_hi,result,overhead,clock,"
             "remat_compute,heuristic_evals,heuristic_evictions,distinct_heuristic_evicted,evictions,"
             "distinct_evicted,evictions_per_evicted,band\n");
  std::vector<size_t> band = BandOfInterval(atlas);
  for (size_t i = 0; i < atlas.intervals.size(); ++i) {
    const AtlasInterval& iv = atlas.intervals[i];
    fmt::print(out, "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", iv.lo, iv.hi, iv.width(),
               AtlasRatio(summary, iv.lo), AtlasRatio(summary, iv.hi), iv.run_lo, iv.run_hi,
               OutcomeName(iv.behaviour.outcome), iv.overhead, iv.behaviour.clock, iv.remat_compute,
               iv.heuristic_evals, iv.behaviour.heuristic_evictions, iv.distinct_heuristic_evicted,
               iv.behaviour.evictions, iv.behaviour.distinct_evicted, iv.evictions_per_evicted, band[i]);
  }
}

std::string AtlasCapText(const AtlasCap& cap, const std::string& flag_prefix) {
  std::string text, flags;
  if (cap.runs > 0) {
    text = fmt::format("{} replays", GroupedInt(static_cast<int64_t>(cap.runs)));
    flags = flag_prefix + "max-runs";
  }
  if (cap.evals > 0) {
    text += fmt::format("{}{} heuristic evaluations", text.empty() ? "" : " or ",
                        GroupedInt(cap.evals));
    flags += (flags.empty() ? "" : ", ") + flag_prefix + "max-evals";
  }
  return text.empty() ? "none" : fmt::format("{} ({})", text, flags);
}

void PrintAtlasText(std::ostream& out, const TraceSummary& summary, const RunSpec& spec, const BudgetAtlas& atlas,
                    size_t max_rows) {
  const AtlasSummary& s = atlas.summary;
  auto ratio = [&](int64_t b) { return AtlasRatio(summary, b); };
  fmt::print(out, "{}  {} on {}\n", summary.log, spec.heuristic->name, RuntimeName(spec.runtime));
  fmt::print(out, "  budgets {} .. {} bytes (ratios {:.7f} .. {:.7f} of baseline memory {})\n", atlas.lo, atlas.hi,
             ratio(atlas.lo), ratio(atlas.hi), summary.baseline.memory);
  fmt::print(
      out, "  {} intervals of identical runs, from {} replays ({} heuristic evaluations; cap: {})",
      s.intervals, atlas.runs, GroupedInt(atlas.evals), AtlasCapText(atlas.cap));
  if (atlas.resumed > 0) fmt::print(out, " ({} read from the checkpoint)", atlas.resumed);
  fmt::print(out, "\n");
  if (atlas.asked_hi)
    fmt::print(
        out,
        "  stopped at its cap of {}: walked up to {} bytes (ratio {:.7f}) of the range asked, "
        "which "
        "ends at {} (ratio {:.7f}); the rest was not walked ({} goes further, 0 walks it all)\n",
        AtlasCapText(atlas.cap), atlas.hi, ratio(atlas.hi), *atlas.asked_hi, ratio(*atlas.asked_hi),
        atlas.cap.evals > 0 ? "--max-evals" : "--max-runs");
  fmt::print(out, "\n");

  auto header = [&](const char* first) {
    fmt::print(out, "{:>6} {:>12} {:>12} {:>10} {:>10} {:>10} {:>7} {:>10} {:>8} {:>9} {:>8}\n", first, "budget lo",
               "budget hi", "width", "ratio lo", "ratio hi", "result", "overhead", "heur.ev", "evictions",
               "ev/stor");
  };
  auto row = [&](size_t index, int64_t lo, int64_t hi, const AtlasInterval& iv) {
    fmt::print(out, "{:>6} {:>12} {:>12} {:>10} {:>10.7f} {:>10.7f} {:>7} {:>10.6f} {:>8} {:>9} {:>8.3f}\n", index, lo,
               hi, hi - lo + 1, ratio(lo), ratio(hi), OutcomeName(iv.behaviour.outcome), iv.overhead,
               iv.behaviour.heuristic_evictions, iv.behaviour.evictions, iv.evictions_per_evicted);
  };
  if (s.intervals <= max_rows) {
    header("#");
    for (size_t i = 0; i < atlas.intervals.size(); ++i) {
      const AtlasInterval& iv = atlas.intervals[i];
      row(i, iv.lo, iv.hi, iv);
    }
  } else if (s.bands.size() <= max_rows) {
    fmt::print(out, "  {} bands: neighbouring intervals with the same result, clock and eviction counts merged\n",
               s.bands.size());
    fmt::print(out, "  (--all lists every interval; --csv or --json give all fields)\n");
    header("band");
    for (size_t b = 0; b < s.bands.size(); ++b) row(b, s.bands[b].lo, s.bands[b].hi, atlas.intervals[s.bands[b].first]);
  } else {
    fmt::print(out, "  {} intervals in {} bands: too many to list (--all lists them; --csv or --json give all fields)\n",
               s.intervals, s.bands.size());
  }

  int64_t range = atlas.hi - atlas.lo + 1;
  fmt::print(out, "\nsummary\n");
  fmt::print(out, "  intervals           {} ({} distinct behaviours, {} distinct result+overhead, {} bands)\n",
             s.intervals, s.distinct_behaviours, s.distinct_overheads, s.bands.size());
  fmt::print(out, "  feasible width      {} bytes ({:.2f}% of the range)\n", s.feasible_width,
             100.0 * s.feasible_width / range);
  fmt::print(out, "  infeasible width    {} bytes ({:.2f}%)\n", s.infeasible_width, 100.0 * s.infeasible_width / range);
  auto budget_line = [&](const char* label, const std::optional<int64_t>& b) {
    if (b)
      fmt::print(out, "  {:<19} {} bytes (ratio {:.9f})\n", label, *b, ratio(*b));
    else
      fmt::print(out, "  {:<19} none in the range\n", label);
  };
  budget_line("smallest feasible", s.smallest_feasible);
  if (s.smallest_feasible == atlas.lo)
    fmt::print(out, "  {:<19} (the range start; the same passing run starts at {} bytes, ratio {:.9f})\n", "",
               atlas.intervals.front().run_lo, ratio(atlas.intervals.front().run_lo));
  budget_line("largest oom", s.largest_oom);
  if (s.largest_infeasible != s.largest_oom) budget_line("largest infeasible", s.largest_infeasible);
  fmt::print(out, "  feasibility holes   {}\n", s.holes.size());
  for (const FeasibilityHole& h : s.holes)
    fmt::print(out, "    [{}, {}]  {} bytes wide, ratios {:.9f} .. {:.9f}, {} ({} interval{})\n", h.lo, h.hi,
               h.width(), ratio(h.lo), ratio(h.hi), Results(h), h.last - h.first + 1, h.last > h.first ? "s" : "");
}

}  // namespace dtr
