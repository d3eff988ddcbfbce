#include "reports/report_figures.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "model/attribution.h"
#include "reports/number_format.h"
#include "reports/proof_report.h"
#include "reports/report_text.h"
#include "reports/svg_plot.h"

namespace dtr {

namespace {

constexpr int kPlotWidth = 1120;
// Regimes and heuristics take the colours of the Okabe-Ito palette, which
// colour-blind readers tell apart (vermillion is kept for failing budgets),
// and a shape each (ShapeOf).
constexpr int kPalette = 6;

const char* const kStyle = R"css(
svg.plot { --ink:#1d2330; --muted:#5b6475; --fail:#d55e00; --fail-soft:rgba(213,94,0,0.10);
  --fail-hard:rgba(213,94,0,0.38); --pass-run:#0072b2; --oom-run:#d55e00; --thrash:#6f6f6f;
  --pinned:#8a93a5; --locked:#56b4e9; }
svg.plot text { font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif; fill:var(--ink); }
svg.plot .paper { fill:#ffffff; }
svg.plot .grid { stroke:#e6e9ef; stroke-width:1; }
svg.plot .frame { fill:none; stroke:#b8c0cc; stroke-width:1; }
svg.plot .tick { font-size:12px; fill:var(--muted); }
svg.plot .axis-label { font-size:13px; fill:var(--muted); }
svg.plot .legend-text { font-size:12.5px; fill:var(--ink); }
svg.plot .band-grid { fill:var(--fail-soft); }
svg.plot .band-exact { fill:var(--fail-hard); }
svg.plot .baseline { stroke:#3b3b3b; stroke-width:1.2; stroke-dasharray:2 4; }
svg.plot .baseline-label { font-size:12px; fill:#3b3b3b; }
svg.plot .atlas-line { fill:none; stroke-width:1.7; stroke-linejoin:miter; }
svg.plot .grid-line { fill:none; stroke-width:1.2; stroke-dasharray:5 4; }
svg.plot .pt { stroke-width:1.6; }
svg.plot .pt.added { fill:#ffffff; }
svg.plot .pt-oom { stroke:var(--fail); stroke-width:2.4; fill:none; }
svg.plot .pt-thrash { fill:var(--thrash); }
svg.plot .inv-mark { fill:#7a1f1f; }
svg.plot .inv-label { font-size:13px; font-weight:700; fill:#7a1f1f; }
svg.plot .cliff-label { font-size:12px; font-weight:600; fill:#5b3a00; }
svg.plot .zoom-box { fill:none; stroke:#1d2330; stroke-width:1.2; stroke-dasharray:4 3; }
svg.plot .zoom-label { font-size:13px; font-weight:700; fill:#1d2330; }
svg.plot .strip-label { font-size:12px; fill:var(--ink); }
svg.plot .strip-gap { fill:#eceef2; }
svg.plot .strip-pass { fill:#cfe3f3; }
svg.plot .strip-fail { fill:var(--fail); }
svg.plot .strip-grid-oom { fill:rgba(213,94,0,0.30); }
svg.plot .c0 { stroke:#0072b2; fill:#0072b2; } svg.plot .c1 { stroke:#e69f00; fill:#e69f00; }
svg.plot .c2 { stroke:#009e73; fill:#009e73; } svg.plot .c3 { stroke:#cc79a7; fill:#cc79a7; }
svg.plot .c4 { stroke:#56b4e9; fill:#56b4e9; } svg.plot .c5 { stroke:#000000; fill:#000000; }
svg.plot .atlas-line.c0, svg.plot .atlas-line.c1, svg.plot .atlas-line.c2, svg.plot .atlas-line.c3,
svg.plot .atlas-line.c4, svg.plot .atlas-line.c5, svg.plot .grid-line { fill:none; }
svg.plot .mem { fill:none; stroke-width:1.3; stroke-linejoin:round; }
svg.plot .run-pass { stroke:var(--pass-run); fill:var(--pass-run); }
svg.plot .run-oom { stroke:var(--oom-run); fill:var(--oom-run); }
svg.plot .run-thrash { stroke:var(--thrash); fill:var(--thrash); }
svg.plot .mem.run-pass, svg.plot .mem.run-oom, svg.plot .mem.run-thrash { fill:none; }
svg.plot .budget { stroke-width:1.4; stroke-dasharray:7 5; fill:none; }
svg.plot .budget-label { font-size:12px; font-weight:600; fill:var(--ink); }
svg.plot .evict-mark { stroke:none; }
svg.plot .lane { fill:#f4f5f8; }
svg.plot .lane-label { font-size:11.5px; fill:var(--muted); }
svg.plot .tick-heur { stroke-width:1; }
svg.plot .tick-eager { stroke-width:1; opacity:0.55; }
svg.plot .tick-remat { stroke-width:1; }
svg.plot .part-ways { stroke:#1d2330; stroke-width:1.3; stroke-dasharray:2 3; }
svg.plot .part-ways-label { font-size:12px; font-weight:600; fill:#1d2330; }
svg.plot .oom-mark { stroke:var(--fail); stroke-width:3; fill:none; }
svg.plot .oom-need { stroke:var(--fail); stroke-width:2; }
svg.plot .oom-label { font-size:12px; font-weight:700; fill:var(--fail); }
svg.plot .bar-pinned { fill:var(--pinned); }
svg.plot .bar-locked { fill:var(--locked); }
svg.plot .bar-ghost { fill:#e8ecf3; }
svg.plot .bar-request { fill:var(--fail); }
svg.plot .bar-other { fill:#9db5e6; }
svg.plot .row-label { font-size:12.5px; }
svg.plot .row-value { font-size:12px; fill:var(--muted); }
svg.plot .row-sep { stroke:#eef0f4; stroke-width:1; }
svg.plot .stack { stroke:#ffffff; stroke-width:0.6; stroke-linejoin:round; }
svg.plot .stack-const { fill:var(--pinned); } svg.plot .stack-other { fill:#d5d9e1; }
svg.plot .stack-0 { fill:#0072b2; } svg.plot .stack-1 { fill:#e69f00; }
svg.plot .stack-2 { fill:#009e73; } svg.plot .stack-3 { fill:#cc79a7; }
svg.plot .stack-4 { fill:#56b4e9; } svg.plot .stack-5 { fill:#f0e442; }
svg.plot .stack-6 { fill:#d55e00; } svg.plot .stack-7 { fill:#000000; }
svg.plot .frontier-budget { stroke:var(--fail); stroke-width:1.6; stroke-dasharray:7 5; }
svg.plot .frontier-budget-label { font-size:12px; font-weight:600; fill:var(--fail); }
)css";

std::string BytesAxisLabel(double v) { return CompactBytes(static_cast<int64_t>(std::llround(v))); }

Figure MakeFigure(const SvgPlot& plot, std::string name, std::string title, std::string caption) {
  Figure f;
  f.name = std::move(name);
  f.title = std::move(title);
  f.caption = std::move(caption);
  f.svg = plot.Finish(f.title);
  f.standalone = plot.Finish(f.title, kStyle);
  return f;
}

// "-DTR" when the report has several heuristics.
std::string Suffix(const BudgetReport& r, size_t k) {
  return r.heuristics.size() > 1 ? "-" + r.heuristics[k].heuristic : "";
}

// ---------------------------------------------------------------------------
// The budget curve.

struct Span {
  double lo = 0, hi = 0;  // ratios
};

// What a curve figure shows: a ratio range, and whether ticks name bytes.
struct CurveView {
  double xlo = 0, xhi = 1;
  bool byte_ticks = false;
  std::string letter;  // "" for the main figure
};

double Ratio(const ReportModel& m, int64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(m.trace.baseline.memory);
}

bool InView(const CurveView& v, double lo, double hi) { return hi >= v.xlo && lo <= v.xhi; }

// The overhead range over what the view shows; `baseline` includes 1.
std::pair<double, double> OverheadRange(const BudgetReport& r, const CurveView& v, bool baseline,
                                        bool* any) {
  double lo = 0, hi = 0;
  *any = false;
  auto take = [&](double o) {
    lo = *any ? std::min(lo, o) : o;
    hi = *any ? std::max(hi, o) : o;
    *any = true;
  };
  for (const ReportModel& m : r.heuristics) {
    for (const BudgetRow& row : m.rows) {
      double x = RowRatio(m, row);
      if (row.run.result.outcome == Outcome::kPass && x >= v.xlo && x <= v.xhi) take(row.run.overhead);
    }
    if (m.atlas)
      for (const BudgetAtlas& s : m.atlas->sections)
        for (const AtlasInterval& iv : s.intervals)
          if (iv.feasible() && InView(v, Ratio(m, iv.lo), Ratio(m, iv.hi))) take(iv.overhead);
  }
  if (baseline) take(1.0);
  return {lo, hi};
}

// The marks a figure draws from every model, shared by the main figure and its zooms.
void DrawCurve(SvgPlot& plot, const BudgetReport& r, const CurveView& v,
               const std::vector<CurveView>& zooms) {
  const bool single = r.heuristics.size() == 1;
  bool any = false;
  auto [ylo, yhi] = OverheadRange(r, v, v.letter.empty(), &any);
  if (!any) {
    ylo = 1;
    yhi = 2;
  }
  const bool log = yhi / std::max(ylo, 1e-9) > 8;
  if (log) {
    ylo /= 1.15;
    yhi *= 1.3;
  } else {
    double span = std::max(yhi - ylo, 0.05 * ylo);
    ylo = std::max(0.0, ylo - 0.10 * span);
    yhi += 0.22 * span;
  }
  const double base0 = static_cast<double>(r.heuristics.front().trace.baseline.memory);
  plot.SetX({v.xlo, v.xhi, false,
             v.byte_ticks ? "budget (bytes)" : "budget ratio (budget / baseline peak memory)",
             v.byte_ticks ? std::function<std::string(double)>(
                                [base0](double x) { return GroupedInt(std::llround(x * base0)); })
                          : std::function<std::string(double)>(),
             {}});
  plot.SetY({ylo, yhi, log, log ? "overhead (log scale)" : "overhead (clock / baseline compute)",
             nullptr, {}});
  // Ticks with bytes are long: fewer of them.
  if (v.byte_ticks) {
    PlotAxis x = {v.xlo, v.xhi, false, "budget (bytes)",
                  [base0](double x) { return GroupedInt(std::llround(x * base0)); },
                  LinearTicks(v.xlo, v.xhi, 5)};
    plot.SetX(x);
  }
  plot.EnableReadout("ratio", "overhead", base0);

  // Failing budgets as bands (one heuristic; several get strips only).
  if (single) {
    const ReportModel& m = r.heuristics.front();
    bool drawn_exact = false, drawn_grid = false;
    if (m.atlas)
      for (const auto& [lo, hi] : m.atlas->Infeasible()) {
        double a = Ratio(m, lo), b = Ratio(m, hi + 1);
        if (!InView(v, a, b)) continue;
        plot.VBand(a, b, "band-exact",
                   fmt::format("every budget in {} bytes fails ({} bytes)", ByteInterval(lo, hi),
                               GroupedInt(hi - lo + 1)),
                   1.5);
        drawn_exact = true;
      }
    const auto& rows = m.rows;
    for (const OomStretch& s : m.curve.oom_stretches) {
      // Inside a walked section the exact band says it all.
      if (m.atlas && m.atlas->SectionAt(rows[s.from].run.result.budget)) continue;
      double a = s.from > 0 ? (RowRatio(m, rows[s.from - 1]) + RowRatio(m, rows[s.from])) / 2
                            : v.xlo;
      double b = s.to + 1 < rows.size()
                     ? (RowRatio(m, rows[s.to]) + RowRatio(m, rows[s.to + 1])) / 2
                     : v.xhi;
      if (!InView(v, a, b)) continue;
      plot.VBand(a, b, "band-grid",
                 fmt::format("OOM on the grid: {}", RowsPhrase(rows[s.from], rows[s.to])));
      drawn_grid = true;
    }
    if (drawn_exact || drawn_grid)
      plot.AddLegend({LegendItem::Swatch::kBand, drawn_exact ? "band-exact" : "band-grid", {},
                      drawn_exact && drawn_grid
                          ? "budgets that fail (pale: between runs that fail, not all run)"
                          : drawn_exact ? "budgets that fail, every one run"
                                        : "runs that fail (the budgets between them not all run)"});
  }
  plot.DrawAxes();
  if (1.0 >= ylo && 1.0 <= yhi) {
    plot.HLine(1.0, "baseline", "");
    plot.FreeLabel(plot.right() - 6, plot.Y(1.0), "overhead 1: no recomputation", "baseline-label", "end",
                   {-5, 14});
  }

  for (size_t k = 0; k < r.heuristics.size(); ++k) {
    const ReportModel& m = r.heuristics[k];
    const std::string colour = fmt::format("c{}", k % kPalette);
    // The atlas: the exact overhead of every walked budget, a step line.
    bool drew_atlas = false;
    if (m.atlas)
      for (const BudgetAtlas& s : m.atlas->sections) {
        std::string d;
        double last_px = -1;
        for (const AtlasInterval& iv : s.intervals) {
          double a = Ratio(m, iv.lo), b = Ratio(m, iv.hi + 1);
          if (!iv.feasible() || !InView(v, a, b)) {
            last_px = -1;
            continue;
          }
          double px0 = std::clamp(plot.X(a), plot.left(), plot.right());
          double px1 = std::clamp(plot.X(b), plot.left(), plot.right());
          double py = std::clamp(plot.Y(iv.overhead), plot.top(), plot.bottom());
          if (last_px >= 0 && std::abs(px0 - last_px) < 0.01)
            d += fmt::format(" V{:.1f} H{:.1f}", py, px1);
          else
            d += fmt::format(" M{:.1f},{:.1f} H{:.1f}", px0, py, px1);
          last_px = px1;
        }
        if (!d.empty()) {
          plot.PixelPath(d, "atlas-line " + (single ? std::string("c0") : colour),
                         fmt::format("{}: exact overhead of every budget in {} bytes", m.heuristic,
                                     ByteInterval(s.lo, s.hi)));
          drew_atlas = true;
        }
      }
    if (drew_atlas)
      plot.AddLegend({LegendItem::Swatch::kLine, "atlas-line " + (single ? std::string("c0") : colour), {},
                      single ? "overhead at every budget, run one by one"
                             : m.heuristic + ": overhead at every budget, run one by one"});
    // The rows joined where the atlas did not walk between them.
    const auto& rows = m.rows;
    bool drew_join = false;
    std::vector<std::pair<double, double>> seg;
    auto flush = [&] {
      if (seg.size() >= 2) {
        plot.Line(seg, "grid-line " + (single ? std::string("c0") : colour));
        // Drawn where some of it lies in the view (the plot clips the rest).
        drew_join |= InView(v, seg.front().first, seg.back().first);
      }
      seg.clear();
    };
    for (size_t i = 0; i < rows.size(); ++i) {
      const BudgetRow& row = rows[i];
      bool walked_to_next =
          i + 1 < rows.size() && m.atlas && m.atlas->SectionAt(row.run.result.budget) &&
          m.atlas->SectionAt(row.run.result.budget) == m.atlas->SectionAt(rows[i + 1].run.result.budget);
      if (row.run.result.outcome != Outcome::kPass) {
        flush();
        continue;
      }
      seg.push_back({RowRatio(m, row), row.run.overhead});
      if (walked_to_next || i + 1 == rows.size() ||
          rows[i + 1].run.result.outcome != Outcome::kPass) {
        flush();
        if (!walked_to_next) seg.push_back({RowRatio(m, row), row.run.overhead});
      }
    }
    flush();
    if (drew_join)
      plot.AddLegend({LegendItem::Swatch::kLine, "grid-line c0", {},
                      "dashed: runs joined, the budgets between them not run"});
    // The rows.
    for (size_t i = 0; i < rows.size(); ++i) {
      const BudgetRow& row = rows[i];
      const RunResult& res = row.run.result;
      const double x = RowRatio(m, row);
      if (x < v.xlo || x > v.xhi) continue;
      std::string title =
          fmt::format("{} {}: budget {} bytes, {}, overhead {}, {} evictions{}", m.heuristic,
                      RowPhrase(row), GroupedInt(res.budget), OutcomeName(res.outcome),
                      ShortDouble(row.run.overhead), GroupedInt(res.evictions()),
                      row.source == RowSource::kGrid ? "" : " (added: " + row.source_reason + ")");
      const bool added = row.source != RowSource::kGrid;
      if (res.outcome == Outcome::kPass) {
        int regime = std::max(0, row.regime);
        std::string cls = single ? fmt::format("pt c{}", regime % kPalette) : "pt " + colour;
        if (added) cls += " added";
        MarkerShape shape = single ? ShapeOf(regime) : ShapeOf(static_cast<int>(k));
        plot.Marker(x, row.run.overhead, shape, 4, cls, title + ", regime " + RegimeLabel(row));
        plot.AddLegend({LegendItem::Swatch::kMarker, "pt c0", MarkerShape::kCircle,
                        single ? "a run that passes (shape and colour: runs of similar overhead)"
                               : "a run that passes (colour: its heuristic)"});
      } else if (res.outcome == Outcome::kOom) {
        double py = plot.bottom() - 6 - 9.0 * static_cast<double>(single ? 0 : k);
        plot.PixelMarker(plot.X(x), py, MarkerShape::kCross, 4,
                         single ? "pt-oom" : "pt-oom " + colour, title);
        plot.AddLegend({LegendItem::Swatch::kMarker, "pt-oom", MarkerShape::kCross,
                        "a run that runs out of memory (at the bottom)"});
      } else {
        plot.PixelMarker(plot.X(x), plot.top() + 6, MarkerShape::kTriangleDown, 5, "pt-thrash", title);
        plot.AddLegend({LegendItem::Swatch::kMarker, "pt-thrash", MarkerShape::kTriangleDown,
                        "a run over the overhead limit (at the top)"});
      }
    }
    // Inversions and cliffs of the rows (one heuristic: several would clutter).
    if (single) {
      for (const ScanInversion& inv : m.curve.analysis.inversions) {
        double mid = (RowRatio(m, rows[inv.oom_from]) + RowRatio(m, rows[inv.oom_to])) / 2;
        if (mid < v.xlo || mid > v.xhi) continue;
        plot.PixelMarker(plot.X(mid), plot.top() + 7, MarkerShape::kTriangleDown, 6, "inv-mark",
                         fmt::format("feasibility inversion: OOM at {}, passing right below and above",
                                     RowsPhrase(rows[inv.oom_from], rows[inv.oom_to])));
        plot.FreeLabel(plot.X(mid), plot.top() + 28, "inversion", "inv-label", "middle", {0},
                       13);
      }
      // Cliffs between budgets that are neighbours to the byte only.
      for (const ScanCliff& c : m.curve.analysis.cliffs) {
        if (!CliffIsSharp(m, c)) continue;
        double x = (RowRatio(m, rows[c.lower]) + RowRatio(m, rows[c.upper])) / 2;
        if (x < v.xlo || x > v.xhi) continue;
        double y = std::max(rows[c.lower].run.overhead, rows[c.upper].run.overhead);
        double px = plot.X(x), py = std::clamp(plot.Y(y), plot.top() + 14, plot.bottom());
        if (plot.FreeLabel(px, py, fmt::format("x{:.2f}", c.factor), "cliff-label", "middle",
                           {-10, -26, 16, -42}))
          plot.AddLegend({LegendItem::Swatch::kTick, "cliff-label", {},
                          fmt::format("x1.9: a cliff, the overhead jumps by more than x{} between "
                                      "neighbouring budgets",
                                      ShortDouble(m.cliff_factor))});
      }
    }
  }
  // Boxes of the zooms taken from this view.
  for (const CurveView& z : zooms) {
    double a = plot.X(z.xlo), b = plot.X(z.xhi);
    if (b - a < 8) {
      double mid = (a + b) / 2;
      a = mid - 4;
      b = mid + 4;
    }
    plot.PixelRect(a, plot.top() + 1, b - a, plot.bottom() - plot.top() - 2, "zoom-box",
                   "zoom " + z.letter);
    plot.FreeLabel(b + 3, plot.top() + 44, z.letter, "zoom-label", "start", {0, 16, 32, 48}, 13);
  }
  // One strip per heuristic under the axis: what the atlas walked, where it fails.
  const double strip_top = plot.bottom() + 26;
  for (size_t k = 0; k < r.heuristics.size(); ++k) {
    const ReportModel& m = r.heuristics[k];
    const double y = strip_top + 18.0 * static_cast<double>(k);
    plot.PixelText(plot.left() - 6, y + 10, m.heuristic, "strip-label", "end");
    plot.PixelRect(plot.left(), y, plot.right() - plot.left(), 12, "strip-gap",
                   m.heuristic + ": not walked by the atlas");
    bool gap = !m.atlas;
    if (m.atlas)
      for (const auto& [lo, hi] : m.atlas->Gaps()) gap |= InView(v, Ratio(m, lo), Ratio(m, hi + 1));
    bool grid_oom = false, fail = false;
    // OOM rows outside the walked sections: their grid cells.
    const auto& rows = m.rows;
    for (const OomStretch& s : m.curve.oom_stretches) {
      if (m.atlas && m.atlas->SectionAt(rows[s.from].run.result.budget)) continue;
      double a = s.from > 0 ? (RowRatio(m, rows[s.from - 1]) + RowRatio(m, rows[s.from])) / 2 : v.xlo;
      double b = s.to + 1 < rows.size() ? (RowRatio(m, rows[s.to]) + RowRatio(m, rows[s.to + 1])) / 2
                                        : v.xhi;
      if (!InView(v, a, b)) continue;
      double pa = std::clamp(plot.X(a), plot.left(), plot.right());
      double pb = std::clamp(plot.X(b), plot.left(), plot.right());
      plot.PixelRect(pa, y, std::max(1.0, pb - pa), 12, "strip-grid-oom",
                     m.heuristic + ": OOM on the grid (not walked)");
      grid_oom = true;
    }
    if (m.atlas)
      for (const BudgetAtlas& s : m.atlas->sections) {
        double a = Ratio(m, s.lo), b = Ratio(m, s.hi + 1);
        if (!InView(v, a, b)) continue;
        double pa = std::clamp(plot.X(a), plot.left(), plot.right());
        double pb = std::clamp(plot.X(b), plot.left(), plot.right());
        plot.PixelRect(pa, y, std::max(1.0, pb - pa), 12, "strip-pass",
                       fmt::format("{}: walked exactly, {} bytes", m.heuristic, ByteInterval(s.lo, s.hi)));
      }
    if (m.atlas)
      for (const auto& [lo, hi] : m.atlas->Infeasible()) {
        double a = Ratio(m, lo), b = Ratio(m, hi + 1);
        if (!InView(v, a, b)) continue;
        double pa = std::clamp(plot.X(a), plot.left(), plot.right());
        double pb = std::clamp(plot.X(b), plot.left(), plot.right());
        if (pb - pa < 1.5) {
          double mid = (pa + pb) / 2;
          pa = mid - 0.75;
          pb = mid + 0.75;
        }
        plot.PixelRect(pa, y, pb - pa, 12, "strip-fail",
                       fmt::format("{}: fails at every budget in {} bytes", m.heuristic, ByteInterval(lo, hi)));
        fail = true;
      }
    if (m.atlas || gap || grid_oom)
      plot.AddLegend({LegendItem::Swatch::kBand, "strip-pass", {},
                      std::string("bar under the plot: budgets run one by one (blue passes") +
                          (fail ? ", orange fails" : "") + (gap ? "; grey: not run" : "") + ")"});
  }
}

// Things worth a closer look: every inversion of the atlas and of the rows,
// every cliff of the rows between neighbouring budgets, and the smallest
// passing budget, over all heuristics.
std::vector<Span> Features(const BudgetReport& r) {
  std::vector<Span> out;
  for (const ReportModel& m : r.heuristics) {
    if (m.curve.exact_inversions)
      for (const AtlasInversion& v : *m.curve.exact_inversions)
        out.push_back({Ratio(m, v.where.first_oom_byte), Ratio(m, v.where.last_oom_byte + 1)});
    for (const ScanInversion& v : m.curve.analysis.inversions)
      out.push_back({RowRatio(m, m.rows[v.feasible_below]), RowRatio(m, m.rows[v.feasible_above])});
    for (const ScanCliff& c : m.curve.analysis.cliffs)
      if (CliffIsSharp(m, c)) out.push_back({RowRatio(m, m.rows[c.lower]), RowRatio(m, m.rows[c.upper])});
    // Where the heuristic starts to pass.
    if (m.headline.smallest_pass) {
      double x = Ratio(m, *m.headline.smallest_pass);
      out.push_back({x, x});
    }
  }
  std::sort(out.begin(), out.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  return out;
}

// Inversions of the atlas narrower than two pixels in `view`, clustered
// (closer than 40 px), at most two clusters, widest span of holes first.
std::vector<Span> NarrowClusters(const BudgetReport& r, const CurveView& view, double px_per_ratio) {
  std::vector<Span> narrow;
  for (const ReportModel& m : r.heuristics)
    if (m.curve.exact_inversions)
      for (const AtlasInversion& v : *m.curve.exact_inversions) {
        Span s{Ratio(m, v.where.first_oom_byte), Ratio(m, v.where.last_oom_byte + 1)};
        if ((s.hi - s.lo) * px_per_ratio < 2 && InView(view, s.lo, s.hi)) narrow.push_back(s);
      }
  std::sort(narrow.begin(), narrow.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  std::vector<Span> clusters;
  for (const Span& s : narrow) {
    if (!clusters.empty() && (s.lo - clusters.back().hi) * px_per_ratio < 40)
      clusters.back().hi = std::max(clusters.back().hi, s.hi);
    else
      clusters.push_back(s);
  }
  if (clusters.size() > 2) clusters.resize(2);
  return clusters;
}

CurveView ZoomOn(const BudgetReport& r, Span s, double pad_fraction, const std::string& letter) {
  const double base = static_cast<double>(r.heuristics.front().trace.baseline.memory);
  double pad = std::max((s.hi - s.lo) * pad_fraction, 64.0 / base);
  CurveView z;
  z.xlo = s.lo - pad;
  z.xhi = s.hi + pad;
  z.letter = letter;
  z.byte_ticks = (z.xhi - z.xlo) < 2e-4 * z.xlo;
  return z;
}

}  // namespace

const std::string& FigureStyle() {
  static const std::string style(kStyle);
  return style;
}

std::vector<Figure> CurveFigures(const BudgetReport& r) {
  CurveView main;
  bool first = true;
  for (const ReportModel& m : r.heuristics)
    for (const BudgetRow& row : m.rows) {
      double x = RowRatio(m, row);
      main.xlo = first ? x : std::min(main.xlo, x);
      main.xhi = first ? x : std::max(main.xhi, x);
      first = false;
    }
  double pad = std::max((main.xhi - main.xlo) * 0.02, 0.005);
  main.xlo = std::max(0.0, main.xlo - pad);
  main.xhi += pad;
  const double plot_px = kPlotWidth - 90;

  // Zooms: first on what was found when it sits in a small part of the
  // range, then on clusters of holes narrower than two pixels.
  std::vector<CurveView> level1, level2;
  const std::string letters = "ABCD";
  std::vector<Span> features = Features(r);
  CurveView context = main;
  if (!features.empty()) {
    Span all{features.front().lo, features.front().hi};
    for (const Span& s : features) {
      all.lo = std::min(all.lo, s.lo);
      all.hi = std::max(all.hi, s.hi);
    }
    if (all.hi - all.lo < 0.3 * (main.xhi - main.xlo)) {
      level1.push_back(ZoomOn(r, all, 0.08, "A"));
      context = level1.back();
    }
  }
  for (const Span& s : NarrowClusters(r, context, plot_px / (context.xhi - context.xlo)))
    level2.push_back(ZoomOn(r, s, 0.4, std::string(1, letters[level1.size() + level2.size()])));

  std::vector<Figure> out;
  const size_t strips = r.heuristics.size();
  auto make = [&](const CurveView& v, const std::vector<CurveView>& zooms, const std::string& name,
                  const std::string& title, const std::string& caption) {
    SvgPlot plot(kPlotWidth, 440 + 18 * static_cast<int>(strips), 74, 16, 24,
                 56 + 18 * static_cast<int>(strips));
    DrawCurve(plot, r, v, zooms);
    out.push_back(MakeFigure(plot, name, title, caption));
  };
  std::string heuristics;
  for (const ReportModel& m : r.heuristics) heuristics += (heuristics.empty() ? "" : ", ") + m.heuristic;
  const std::vector<CurveView>& from_main = level1.empty() ? level2 : level1;
  make(main, from_main, "curve", "budget curve: overhead against budget ratio",
       fmt::format("Overhead against budget ratio ({}).", heuristics));
  for (size_t i = 0; i < level1.size(); ++i) {
    const CurveView& z = level1[i];
    make(z, level2, "zoom-" + std::string(1, static_cast<char>('a' + i)),
         "zoom " + z.letter + " of the budget curve",
         fmt::format("Zoom {}: ratios {:.6f} to {:.6f}, where the atlas found inversions and cliffs.",
                     z.letter, z.xlo, z.xhi));
  }
  const double base = static_cast<double>(r.heuristics.front().trace.baseline.memory);
  for (const CurveView& z : level2) {
    std::string lower(1, static_cast<char>(std::tolower(static_cast<unsigned char>(z.letter[0]))));
    make(z, {}, "zoom-" + lower, "zoom " + z.letter + " of the budget curve",
         fmt::format("Zoom {}: budgets {} to {} bytes, holes narrower than a pixel above.", z.letter,
                     GroupedInt(std::llround(z.xlo * base)), GroupedInt(std::llround(z.xhi * base))));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The memory timeline.

namespace {

std::string RunClass(Outcome o) {
  return o == Outcome::kPass ? "run-pass" : o == Outcome::kOom ? "run-oom" : "run-thrash";
}

}  // namespace

Figure TimelineFigure(const BudgetReport& report, size_t k) {
  const ReportModel& m = report.heuristics[k];
  const std::vector<MemoryTimeline>& ts = m.timelines;
  double xhi = 1, ymax = 1;
  for (const MemoryTimeline& t : ts) {
    xhi = std::max(xhi, static_cast<double>(t.program_steps));
    ymax = std::max(ymax, static_cast<double>(t.budget));
    for (const TimelinePoint& p : t.points) ymax = std::max(ymax, static_cast<double>(p.memory));
    if (t.oom) ymax = std::max(ymax, static_cast<double>(t.oom->memory_usage + t.oom->request));
  }
  // Two lanes per run under the plot: evictions, rematerializations.
  const int lanes = 2 * static_cast<int>(ts.size());
  const int lane_h = 14, lane_gap = 4;
  const int lanes_h = lanes * (lane_h + lane_gap);
  SvgPlot plot(kPlotWidth, 420 + lanes_h, 150, 16, 24, 56 + lanes_h);
  plot.SetX({0, xhi, false, "program step (the operator of the program being computed; a run's "
                            "rematerializations stack at the step that needed them)",
             [](double v) { return GroupedInt(std::llround(v)); }, {}});
  plot.SetY({0, ymax * 1.1, false, "memory in use", BytesAxisLabel, {}});
  plot.EnableReadout("step", "bytes");
  plot.DrawAxes();
  // Budgets first: one line when they are within a pixel.
  std::vector<const MemoryTimeline*> budget_lines;
  for (const MemoryTimeline& t : ts) {
    bool near = false;
    for (const MemoryTimeline* b : budget_lines)
      near |= std::abs(plot.Y(static_cast<double>(b->budget)) - plot.Y(static_cast<double>(t.budget))) < 2;
    if (!near) budget_lines.push_back(&t);
  }
  for (const MemoryTimeline* b : budget_lines) {
    std::string label = "budget";
    for (const MemoryTimeline& t : ts)
      if (std::abs(plot.Y(static_cast<double>(b->budget)) - plot.Y(static_cast<double>(t.budget))) < 2)
        label += (label == "budget" ? " " : " / ") + GroupedInt(t.budget);
    double py = plot.Y(static_cast<double>(b->budget));
    plot.PixelLine(plot.left(), py, plot.right(), py, "budget " + RunClass(b->outcome));
    // Labels of close lines move below their line, or further, so that they never overlap.
    plot.FreeLabel(plot.left() + 6, py, label + " bytes", "budget-label", "start", {-5, 14, -21, 30});
  }
  plot.AddLegend({LegendItem::Swatch::kLine, "budget run-pass", {}, "budget (dashed, in the run's colour)"});
  for (const MemoryTimeline& t : ts) {
    const std::string cls = RunClass(t.outcome);
    const BudgetRow& row = m.rows[t.run];
    std::string d;
    for (size_t i = 0; i < t.points.size(); ++i)
      d += fmt::format("{}{:.1f},{:.1f}", i ? " L" : "M", plot.X(t.points[i].program_step + 0.5),
                       plot.Y(static_cast<double>(t.points[i].memory)));
    plot.PixelPath(d, "mem " + cls,
                   fmt::format("{} ({}): memory right after each computation", t.role, RowPhrase(row)));
    plot.AddLegend({LegendItem::Swatch::kLine, "mem " + cls, {},
                    fmt::format("{}: {}, budget {} ({})", t.role, RowPhrase(row), GroupedInt(t.budget),
                                OutcomeName(t.outcome))});
  }
  // Heuristic evictions on the line (where memory was when the decision was made).
  for (const MemoryTimeline& t : ts) {
    const std::string cls = RunClass(t.outcome);
    bool any = false;
    for (const TimelineEviction& e : t.evictions) {
      if (!e.heuristic) continue;
      plot.PixelMarker(plot.X(e.program_step + 0.5), plot.Y(static_cast<double>(e.memory)) - 4,
                       MarkerShape::kTriangleDown, 2.6, "evict-mark " + cls,
                       fmt::format("heuristic eviction (decision at computation {}, program step {}): "
                                   "storage of {} bytes, {} in use",
                                   e.event, e.program_step, GroupedInt(e.bytes), GroupedInt(e.memory)));
      any = true;
    }
    if (any)
      plot.AddLegend({LegendItem::Swatch::kMarker, "evict-mark " + cls, MarkerShape::kTriangleDown,
                      "heuristic eviction, at the memory in use when it was decided"});
  }
  // Lanes.
  const double lane0 = plot.bottom() + 26;
  int lane = 0;
  for (const MemoryTimeline& t : ts) {
    const std::string cls = RunClass(t.outcome);
    const std::string who = ts.size() > 1 ? (t.outcome == Outcome::kPass ? "pass" : "OOM") : "run";
    for (int kind = 0; kind < 2; ++kind, ++lane) {
      double y = lane0 + lane * (lane_h + lane_gap);
      plot.PixelRect(plot.left(), y, plot.right() - plot.left(), lane_h, "lane", "");
      plot.PixelText(plot.left() - 6, y + lane_h - 3,
                     kind == 0 ? who + ": evictions" : who + ": remats", "lane-label", "end");
      std::string dh, de;
      if (kind == 0) {
        for (const TimelineEviction& e : t.evictions) {
          double px = plot.X(e.program_step + 0.5);
          (e.heuristic ? dh : de) += e.heuristic
                                         ? fmt::format("M{:.1f},{:.1f} V{:.1f}", px, y, y + lane_h)
                                         : fmt::format("M{:.1f},{:.1f} V{:.1f}", px, y + lane_h * 0.5, y + lane_h);
        }
        plot.PixelPath(de, "tick-eager " + cls, fmt::format("{} eager evictions", t.eager_evictions));
        plot.PixelPath(dh, "tick-heur " + cls, fmt::format("{} heuristic evictions", t.heuristic_evictions));
      } else {
        for (const TimelineRemat& rm : t.remats) {
          double px = plot.X(rm.program_step + 0.5);
          dh += fmt::format("M{:.1f},{:.1f} V{:.1f}", px, y, y + lane_h);
        }
        plot.PixelPath(dh, "tick-remat " + cls, fmt::format("{} rematerializations", t.remat_events));
      }
    }
  }
  plot.AddLegend({LegendItem::Swatch::kTick, "tick-heur run-pass", {},
                  "lanes: a tick per heuristic eviction (full height), eager eviction (half), "
                  "rematerialization"});
  if (m.timeline_divergence) {
    const FirstDivergence& d = *m.timeline_divergence;
    const std::optional<DecisionPoint>& p = d.a ? d.a : d.b;
    if (p) {
      double px = plot.X(p->program_step + 0.5);
      plot.PixelLine(px, plot.top(), px, plot.bottom(), "part-ways");
      bool right = px > (plot.left() + plot.right()) / 2;
      plot.FreeLabel(px + (right ? -6 : 6), plot.top() + 14,
                     fmt::format("runs part ways: decision {} ({})", d.index, DivergenceKindName(d.kind)),
                     "part-ways-label", right ? "end" : "start", {0, 16, 32});
      plot.AddLegend({LegendItem::Swatch::kLine, "part-ways", {},
                      "first decision where the two runs differ (dtrcheck diff)"});
    }
  }
  for (const MemoryTimeline& t : ts) {
    if (!t.oom) continue;
    double px = plot.X(t.oom->program_step + 0.5);
    double need = static_cast<double>(t.oom->memory_usage + t.oom->request);
    plot.PixelLine(px, plot.Y(static_cast<double>(t.oom->memory_usage)), px, plot.Y(need), "oom-need");
    plot.PixelMarker(px, plot.Y(need), MarkerShape::kCross, 6, "oom-mark",
                     fmt::format("OOM: {} needs {} bytes with {} in use", t.oom->op,
                                 GroupedInt(t.oom->request), GroupedInt(t.oom->memory_usage)));
    bool right = px > (plot.left() + plot.right()) / 2;
    plot.FreeLabel(px + (right ? -10 : 10), plot.Y(need) - 8,
                   fmt::format("OOM: {} needs {}", t.oom->op, HumanBytes(t.oom->request)), "oom-label",
                   right ? "end" : "start", {0, 16, -16, 32});
    plot.AddLegend({LegendItem::Swatch::kMarker, "oom-mark", MarkerShape::kCross,
                    "OOM: memory in use plus the request that did not fit"});
  }
  return MakeFigure(plot, "timeline" + Suffix(report, k),
                    fmt::format("memory timeline ({})", m.heuristic),
                    fmt::format("Memory in use against the program step: {}.", m.timeline_selection));
}

// ---------------------------------------------------------------------------
// The stacked memory view.

namespace {

// One stacked area chart: every band a filled path between the sums of the
// bands below it and its own top, flat from each column's first program step
// to the next column's (steps without a computation, such as releases, have
// no column), so that the stack's top is the memory in use at each column's
// sampled computation. Bands that never hold a byte are not drawn.
Figure StackFigureOf(const Trace& trace, const ReportModel& m, const StackedMemory& view,
                     const std::string& name, const std::string& what) {
  const MemoryStack& s = m.memory_stack;
  double ymax = std::max(1.0, static_cast<double>(s.budget));
  for (const StackColumn& c : view.columns) ymax = std::max(ymax, static_cast<double>(c.memory));
  // The timeline's margins, so that its program steps line up with the timeline above.
  SvgPlot plot(kPlotWidth, 380, 150, 16, 24, 56);
  plot.SetX({0, std::max(1.0, static_cast<double>(s.program_steps)), false,
             "program step (each column: the computation with the most memory in use)",
             [](double v) { return GroupedInt(std::llround(v)); }, {}});
  plot.SetY({0, ymax * 1.1, false, "memory in use", BytesAxisLabel, {}});
  plot.EnableReadout("step", "bytes");
  plot.DrawAxes();
  const BudgetRow& row = m.rows[s.run];
  // Colours: constants and the rest in greys, every other band its own hue.
  std::vector<std::string> classes;
  int hue = 0;
  for (const StackBand& b : view.bands)
    classes.push_back(b.kind == StackBand::Kind::kConstants ? "stack-const"
                      : b.kind == StackBand::Kind::kOther   ? "stack-other"
                                                            : fmt::format("stack-{}", hue++));
  std::vector<int64_t> below(view.columns.size(), 0);
  std::vector<LegendItem> legend;
  for (size_t b = 0; b < view.bands.size(); ++b) {
    const StackBand& band = view.bands[b];
    if (band.peak_bytes == 0) continue;
    std::string top, bottom;
    for (size_t c = 0; c < view.columns.size(); ++c) {
      const StackColumn& col = view.columns[c];
      const double x0 = plot.X(col.first_step);
      const double x1 = plot.X(c + 1 < view.columns.size() ? view.columns[c + 1].first_step
                                                           : col.last_step + 1);
      const double y_top = plot.Y(static_cast<double>(below[c] + col.bytes[b]));
      const double y_bottom = plot.Y(static_cast<double>(below[c]));
      top += fmt::format("{}{:.1f},{:.1f} L{:.1f},{:.1f}", top.empty() ? "M" : " L", x0, y_top, x1, y_top);
      bottom = fmt::format(" L{:.1f},{:.1f} L{:.1f},{:.1f}", x1, y_bottom, x0, y_bottom) + bottom;
      below[c] += col.bytes[b];
    }
    const std::string label = StackBandLabel(trace, view, band);
    plot.PixelPath(top + bottom + " Z", "stack " + classes[b],
                   fmt::format("{}: at most {} bytes ({}) at once", label, GroupedInt(band.peak_bytes),
                               HumanBytes(band.peak_bytes)));
    legend.push_back({LegendItem::Swatch::kBand, "stack " + classes[b], {}, label});
  }
  // The budget over the stack, labelled where it does not meet another label.
  const double py = plot.Y(static_cast<double>(s.budget));
  plot.PixelLine(plot.left(), py, plot.right(), py, "budget " + RunClass(s.outcome));
  plot.FreeLabel(plot.left() + 6, py,
                 fmt::format("budget {} bytes ({}{})", GroupedInt(s.budget),
                             row.run.spec.ratio ? "ratio " + row.run.spec.ratio->text + ", " : "",
                             OutcomeName(s.outcome)),
                 "budget-label", "start", {-5, 14});
  if (s.outcome == Outcome::kOom && !view.columns.empty()) {
    const double px = plot.X(view.columns.back().last_step + 1);
    plot.PixelLine(px, plot.top(), px, plot.bottom(), "part-ways");
    plot.FreeLabel(px + 6, plot.top() + 14, "out of memory here", "oom-label", "start", {0, 16});
  }
  // The legend reads as the stack does, its top band first; the budget is
  // labelled on its line, so the eight entries are all bands.
  for (auto it = legend.rbegin(); it != legend.rend(); ++it) plot.AddLegend(*it);
  return MakeFigure(plot, name, fmt::format("memory stacked by {} ({})", what, m.heuristic),
                    fmt::format("Memory in use against the program step at {}, stacked by {}.",
                                RowPhrase(row), what));
}

}  // namespace

std::vector<Figure> StackFigures(const Trace& trace, const BudgetReport& report, size_t k) {
  const ReportModel& m = report.heuristics[k];
  std::vector<Figure> out;
  out.push_back(StackFigureOf(trace, m, m.memory_stack.by_storage, "stack-storage" + Suffix(report, k),
                              "storage"));
  if (m.memory_stack.by_module)
    out.push_back(StackFigureOf(trace, m, *m.memory_stack.by_module,
                                "stack-module" + Suffix(report, k), "module"));
  return out;
}

// ---------------------------------------------------------------------------
// The pinned frontier.

namespace {

// Cumulative bars: what is held when each pending frame is reached, against
// the budget line; the last bar adds the request that did not fit.
std::string FrontierSvgOf(const Trace& trace, const ReportModel& m, const OomFrontier& f,
                          std::string* standalone) {
  const RematFrontier& r = f.frontier;
  const int64_t budget = m.rows[f.runs.front()].run.result.budget;
  struct Bar {
    std::string label, value;
    int64_t from, to;
    std::string css, title;
  };
  std::vector<Bar> bars;
  int64_t cum = r.pinned_bytes;
  bars.push_back({"pinned (constants and pinned outputs)", GroupedInt(r.pinned_bytes), 0, cum,
                  "bar-pinned", "pinned storages in memory"});
  auto op_name = [&](const FrontierFrame& fr) { return OperatorLabel(trace, trace.tensors[fr.tensor].op); };
  // Runs of three or more frames that lock nothing new (their arguments are
  // being rematerialized, or already held above) are drawn as one row.
  for (size_t i = 0; i < r.frames.size();) {
    size_t j = i;
    while (j < r.frames.size() && r.frames[j].new_locked_bytes == 0) ++j;
    if (j - i >= 3) {
      std::string ops;
      for (size_t q = i; q < j && q < i + 12; ++q)
        ops += fmt::format("\n  depth {}: {}", r.frames[q].depth, op_name(r.frames[q]));
      if (j - i > 12) ops += "\n  ...";
      bars.push_back(
          {fmt::format("depths {}-{}: {} frames locking nothing new", r.frames[i].depth,
                       r.frames[j - 1].depth, j - i),
           "+0", cum, cum, "bar-locked",
           "pending rematerializations whose arguments are evicted or held above:" + ops});
      i = j;
      continue;
    }
    const FrontierFrame& fr = r.frames[i++];
    std::string args;
    for (const FrontierArg& a : fr.args)
      args += fmt::format("\n  {} {} bytes: {}", trace.tensors[a.tensor].name,
                          GroupedInt(trace.storages[a.storage].size), ArgStateName(a.state));
    std::string label =
        fmt::format("{}{} {}", fr.depth == 0 ? "program op " : fmt::format("depth {}: ", fr.depth),
                    op_name(fr), fr.depth == 0 ? "" : "(remat)");
    bars.push_back({label, fmt::format("+{}", GroupedInt(fr.new_locked_bytes)), cum,
                    cum + fr.new_locked_bytes, "bar-locked",
                    fmt::format("{} computing {}; arguments:{}", op_name(fr),
                                trace.tensors[fr.tensor].name, args)});
    cum += fr.new_locked_bytes;
  }
  int64_t frame_locked = 0;
  for (const FrontierFrame& fr : r.frames) frame_locked += fr.new_locked_bytes;
  if (r.locked_bytes != frame_locked) {
    int64_t other = r.locked_bytes - frame_locked;
    bars.push_back({"other locked storages", fmt::format("{:+}", other), cum, cum + other,
                    "bar-other", "locked storages not attributed to a frame"});
    cum += other;
  }
  const std::string inner_op = op_name(r.frames.back());
  bars.push_back({fmt::format("request of {}", inner_op), fmt::format("+{}", GroupedInt(r.request)),
                  cum, cum + r.request, "bar-request", "the allocation that did not fit"});
  const int row_h = bars.size() > 30 ? 16 : 26;
  const int label_w = 360, value_w = 110;
  const int height = 34 + row_h * static_cast<int>(bars.size()) + 44;
  SvgPlot plot(kPlotWidth, height, label_w, value_w, 30, 44);
  double xmax = static_cast<double>(std::max(budget, cum + r.request)) * 1.06;
  plot.SetX({0, xmax, false, "bytes held (cumulative)", BytesAxisLabel, {}});
  plot.SetY({0, 1, false, "", nullptr, {0}});
  for (double v : LinearTicks(0, xmax, 8)) {
    double px = plot.X(v);
    plot.PixelLine(px, plot.top(), px, plot.bottom(), "grid");
    plot.PixelText(px, plot.bottom() + 16, BytesAxisLabel(v), "tick", "middle");
  }
  plot.PixelText((plot.left() + plot.right()) / 2, height - 8,
                 "bytes held (cumulative): pinned, then the locks of "
                 "each pending frame, then the request",
                 "axis-label", "middle");
  bool ghost = false, other = false;
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    double y = plot.top() + 4 + static_cast<double>(i) * row_h;
    double h = row_h - 6;
    plot.PixelLine(12, y + row_h - 3, plot.right() + value_w - 8, y + row_h - 3, "row-sep");
    if (b.from > 0) {
      plot.PixelRect(plot.X(0), y, plot.X(static_cast<double>(b.from)) - plot.X(0), h, "bar-ghost",
                     "");
      ghost = true;
    }
    other |= b.css == "bar-other";
    plot.PixelRect(
        plot.X(static_cast<double>(b.from)), y,
        std::max(1.0, plot.X(static_cast<double>(b.to)) - plot.X(static_cast<double>(b.from))), h,
        b.css, b.title);
    std::string label = b.label.size() > 52 ? b.label.substr(0, 50) + "..." : b.label;
    plot.PixelText(12, y + h - 4, label, "row-label");
    plot.PixelText(plot.right() + 8, y + h - 4, b.value, "row-value");
  }
  double bx = plot.X(static_cast<double>(budget));
  plot.PixelLine(bx, plot.top() - 8, bx, plot.bottom(), "frontier-budget");
  plot.PixelText(bx + 4, plot.top() - 12, fmt::format("budget {}", HumanBytes(budget)),
                 "frontier-budget-label");
  plot.AddLegend({LegendItem::Swatch::kBand, "bar-pinned", {}, "pinned"});
  plot.AddLegend({LegendItem::Swatch::kBand, "bar-locked", {}, "locked by the frame"});
  if (other) plot.AddLegend({LegendItem::Swatch::kBand, "bar-other", {}, "other locked storages"});
  plot.AddLegend({LegendItem::Swatch::kBand, "bar-request", {}, "request that did not fit"});
  if (ghost) plot.AddLegend({LegendItem::Swatch::kBand, "bar-ghost", {}, "held by the rows above"});
  plot.AddLegend({LegendItem::Swatch::kLine, "frontier-budget", {}, "budget"});
  const std::string title = "pinned frontier of an OOM: cumulative held memory against the budget";
  *standalone = plot.Finish(title, kStyle);
  return plot.Finish(title);
}

}  // namespace

std::vector<Figure> FrontierFigures(const Trace& trace, const BudgetReport& report, size_t k) {
  const ReportModel& m = report.heuristics[k];
  std::vector<Figure> out;
  if (!m.frontiers) return out;
  for (size_t i = 0; i < m.frontiers->size(); ++i) {
    const OomFrontier& f = (*m.frontiers)[i];
    Figure fig;
    fig.name = fmt::format("frontier-{}{}", i + 1, Suffix(report, k));
    fig.title = "pinned frontier of an OOM: cumulative held memory against the budget";
    fig.caption = FrontierSummary(trace, m, f);
    fig.svg = FrontierSvgOf(trace, m, f, &fig.standalone);
    out.push_back(std::move(fig));
  }
  return out;
}

}  // namespace dtr
