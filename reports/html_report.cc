#include "reports/html_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>

#include "reports/instability_report.h"
#include "reports/number_format.h"
#include "reports/proof_report.h"
#include "reports/report_json.h"
#include "reports/report_text.h"
#include "reports/svg_plot.h"

namespace dtr {

namespace {

constexpr int kPlotWidth = 1120;

// No web fonts: the system's own sans-serif and monospace faces.
constexpr const char* kStyle = R"css(
:root { --ink:#1d2330; --muted:#5b6475; --line:#d9dee7; --bg:#f6f7f9; --card:#ffffff;
  --pass:#2f6fd6; --oom:#d33a3a; --oom-soft:rgba(211,58,58,0.13); --oom-hard:rgba(211,58,58,0.45);
  --remat:#e08a1e; --pinned:#8a93a5; --locked:#4a7bd0; --thrash:#9b59b6; }
* { box-sizing:border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; }
main { max-width:1200px; margin:0 auto; padding:24px 28px 48px; }
header h1 { font-size:26px; margin:8px 0 4px; }
header p.sub { color:var(--muted); margin:0 0 18px; }
code, .mono, td.num { font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono",monospace; }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:18px 22px;
  margin:18px 0; }
section h2 { font-size:19px; margin:0 0 10px; }
section h3 { font-size:16px; margin:18px 0 6px; }
.cards { display:flex; flex-wrap:wrap; gap:12px; margin:4px 0 0; }
.card { flex:1 1 150px; border:1px solid var(--line); border-radius:8px; padding:10px 14px; background:#fbfcfd; }
.card .k { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.card .v { font-size:20px; font-weight:600; }
.card .d { color:var(--muted); font-size:12px; }
.card.alert .v { color:var(--oom); }
ul.findings { margin:6px 0 12px; padding-left:20px; }
ul.findings li { margin:3px 0; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { padding:4px 8px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { background:#f0f2f6; position:sticky; top:0; }
td.num, th.num { text-align:right; white-space:nowrap; }
tr.oom td { background:#fdf1f1; }
tr.inversion td { background:#f9dede; }
tr.selected td:first-child { box-shadow:inset 4px 0 0 var(--remat); }
.badge { display:inline-block; padding:0 7px; border-radius:9px; font-size:12px; font-weight:600; color:#fff; }
.badge.pass { background:var(--pass); } .badge.oom { background:var(--oom); }
.badge.thrash { background:var(--thrash); } .badge.inv { background:#7a1f1f; margin-left:4px; }
.scroll { max-height:560px; overflow:auto; border:1px solid var(--line); border-radius:6px; }
.legend { display:flex; flex-wrap:wrap; gap:16px; color:var(--muted); font-size:13px; margin:6px 0 0; }
.legend span.sw { display:inline-block; width:22px; height:11px; margin-right:6px; vertical-align:-1px;
  border-radius:2px; }
.pending { border-style:dashed; background:#fbfbfc; }
.pending p { color:var(--muted); }
.note { color:var(--muted); font-size:13px; }
svg.plot { display:block; max-width:100%; height:auto; margin:8px 0 4px; }
svg.plot text { font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif; fill:var(--ink); }
svg.plot .grid { stroke:#e6e9ef; stroke-width:1; }
svg.plot .frame { fill:none; stroke:#b8c0cc; stroke-width:1; }
svg.plot .tick { font-size:12px; fill:var(--muted); }
svg.plot .axis-label { font-size:13px; fill:var(--muted); }
svg.plot .band-grid { fill:var(--oom-soft); }
svg.plot .band-exact { fill:var(--oom-hard); }
svg.plot .curve { fill:none; stroke:var(--pass); stroke-width:2.2; stroke-linejoin:round; }
svg.plot .pt-pass { fill:#fff; stroke:var(--pass); stroke-width:1.8; }
svg.plot .pt-oom { stroke:var(--oom); stroke-width:2.4; fill:none; }
svg.plot .pt-thrash { fill:var(--thrash); }
svg.plot .inv-mark { fill:#7a1f1f; }
svg.plot .inv-label { font-size:13px; font-weight:700; fill:#7a1f1f; }
svg.plot .cliff-label { font-size:12px; font-weight:600; fill:var(--remat); }
svg.plot .cliff { stroke:var(--remat); stroke-width:1.5; stroke-dasharray:3 3; }
svg.plot .mem { fill:none; stroke:var(--pass); stroke-width:1.5; stroke-linejoin:round; }
svg.plot .remat-pt { fill:var(--remat); }
svg.plot .decision { stroke:#7d8799; stroke-width:1; }
svg.plot .budget { stroke:var(--oom); stroke-width:1.6; stroke-dasharray:7 5; }
svg.plot .budget-label { font-size:12px; font-weight:600; fill:var(--oom); }
svg.plot .oom-mark { stroke:var(--oom); stroke-width:3; fill:none; }
svg.plot .oom-need { stroke:var(--oom); stroke-width:2; }
svg.plot .oom-label { font-size:12px; font-weight:700; fill:var(--oom); }
svg.plot .bar-pinned { fill:var(--pinned); }
svg.plot .bar-locked { fill:var(--locked); }
svg.plot .bar-ghost { fill:#e8ecf3; }
svg.plot .bar-request { fill:var(--oom); }
svg.plot .bar-other { fill:#9db5e6; }
svg.plot .row-label { font-size:12.5px; }
svg.plot .row-value { font-size:12px; fill:var(--muted); }
svg.plot .row-sep { stroke:#eef0f4; stroke-width:1; }
svg.plot .hole-mark { fill:var(--oom); }
svg.plot .reg0 { stroke:#2f6fd6; } svg.plot .reg1 { stroke:#1b9e77; } svg.plot .reg2 { stroke:#e08a1e; }
svg.plot .reg3 { stroke:#7570b3; } svg.plot .reg4 { stroke:#e7298a; } svg.plot .reg5 { stroke:#66a61e; }
svg.plot .reg6 { stroke:#a6761d; } svg.plot .reg7 { stroke:#444444; }
.sw.reg0 { background:#2f6fd6; } .sw.reg1 { background:#1b9e77; } .sw.reg2 { background:#e08a1e; }
.sw.reg3 { background:#7570b3; } .sw.reg4 { background:#e7298a; } .sw.reg5 { background:#66a61e; }
.sw.reg6 { background:#a6761d; } .sw.reg7 { background:#444444; }
pre.diff { background:#f6f7f9; border:1px solid var(--line); border-radius:6px; padding:8px 10px;
  font-size:12px; overflow:auto; max-height:360px; }
.verdict-policy-induced { color:#1b7a3a; font-weight:600; } .verdict-inherent { color:var(--oom); font-weight:600; }
.verdict-undetermined { color:var(--muted); font-weight:600; }
footer { color:var(--muted); font-size:12px; text-align:center; margin-top:24px; }
)css";

std::string H(const std::string& s) { return XmlEscape(s); }

// Escaped text whose `backquoted` spans (Markdown code in the shared
// sentences of reports/report_text.h) become <code> elements.
std::string HCode(const std::string& s) {
  std::string out;
  bool open = false;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != '`') continue;
    out += H(s.substr(start, i - start));
    if (i < s.size()) out += (open = !open) ? "<code>" : "</code>";
    start = i + 1;
  }
  if (open) out += "</code>";
  return out;
}

std::string Badge(Outcome o) {
  std::string name(OutcomeName(o));
  return fmt::format("<span class=\"badge {}\">{}</span>",
                     name == "pass" || name == "oom" || name == "thrash" ? name : "oom", name);
}

double RowRatio(const ReportModel& m, const BudgetRow& row) {
  return row.run.spec.ratio ? row.run.spec.ratio->value
                            : static_cast<double>(row.run.result.budget) /
                                  static_cast<double>(m.trace.baseline.memory);
}

std::string BytesAxisLabel(double v) { return CompactBytes(static_cast<int64_t>(std::llround(v))); }

// The atlas' feasibility inversions that no grid inversion contains.
std::vector<ExactInversion> MissedInversions(const ReportModel& m) {
  std::vector<ExactInversion> out;
  if (!m.curve.exact_inversions) return out;
  for (const ExactInversion& v : *m.curve.exact_inversions)
    if (v.missed_by_grid()) out.push_back(v);
  return out;
}

// Overhead vs ratio: feasible runs as a line, OOM grid cells as light bands,
// exactly known OOM byte intervals as dark bands, inversions and cliffs marked.
std::string BudgetCurveSvg(const ReportModel& m) {
  const auto& rows = m.rows;
  const double base = static_cast<double>(m.trace.baseline.memory);
  double xlo = RowRatio(m, rows.front()), xhi = RowRatio(m, rows.back());
  double pad = rows.size() > 1 ? (xhi - xlo) / (rows.size() - 1) / 2 : 0.01;
  if (pad <= 0) pad = 0.01;
  xlo -= pad;
  xhi += pad;
  double ylo = 1, yhi = 1;
  bool any_pass = false;
  for (const BudgetRow& r : rows)
    if (r.run.result.outcome == Outcome::kPass) {
      ylo = any_pass ? std::min(ylo, r.run.overhead) : r.run.overhead;
      yhi = any_pass ? std::max(yhi, r.run.overhead) : r.run.overhead;
      any_pass = true;
    }
  bool log = any_pass && yhi / ylo > 8;
  if (!any_pass) {
    ylo = 1;
    yhi = 2;
  }
  if (log) {
    ylo /= 1.15;
    yhi *= 1.25;
  } else {
    double span = std::max(yhi - ylo, 0.05 * ylo);
    ylo = std::max(0.0, ylo - 0.08 * span);
    yhi += 0.22 * span;
  }
  SvgPlot plot(kPlotWidth, 440, 70, 20, 30, 48);
  plot.SetX({xlo, xhi, false, "budget ratio (budget / baseline peak memory)", nullptr, {}});
  plot.SetY({ylo,
             yhi,
             log,
             log ? "overhead (log scale)" : "overhead (clock / baseline compute)",
             nullptr,
             {}});

  // Bands first, so that the curve is drawn over them. With a complete
  // atlas every infeasible budget is known to the byte: its stretches are
  // the bands (at least 2 px wide, so that a hole narrower than a pixel
  // still shows). Without it, the grid's OOM cells and the rows' own exact
  // intervals.
  const bool exact = m.atlas && !m.atlas->atlas.stopped;
  if (exact) {
    for (const auto& [lo, hi] : m.atlas->infeasible)
      plot.VBand(static_cast<double>(lo) / base, (static_cast<double>(hi) + 1) / base, "band-exact",
                 fmt::format("atlas: every budget in {} bytes ({} bytes) fails",
                             ByteInterval(lo, hi), GroupedInt(hi - lo + 1)),
                 2.0);
  } else {
    for (const OomStretch& b : m.curve.oom_stretches) {
      double a = b.from > 0 ? (RowRatio(m, rows[b.from - 1]) + RowRatio(m, rows[b.from])) / 2 : xlo;
      double z = b.to + 1 < rows.size()
                     ? (RowRatio(m, rows[b.to]) + RowRatio(m, rows[b.to + 1])) / 2
                     : xhi;
      plot.VBand(a, z, "band-grid",
                 fmt::format("OOM on the grid: ratios {} to {}", RatioLabel(rows[b.from]),
                             RatioLabel(rows[b.to])));
      for (const auto& [lo, hi] : b.known_oom) {
        double hi_ratio = hi == kInfiniteBudget ? xhi : (static_cast<double>(hi) + 1) / base;
        plot.VBand(static_cast<double>(lo) / base, hi_ratio, "band-exact",
                   fmt::format("OOM for every budget in {} bytes", ByteInterval(lo, hi)), 2.0);
      }
    }
  }
  plot.DrawAxes();
  std::vector<std::pair<double, double>> segment;
  auto flush = [&] {
    plot.Line(segment, "curve");
    segment.clear();
  };
  for (const BudgetRow& r : rows) {
    if (r.run.result.outcome == Outcome::kPass)
      segment.push_back({RowRatio(m, r), r.run.overhead});
    else
      flush();
  }
  flush();
  for (const BudgetRow& r : rows) {
    const RunResult& res = r.run.result;
    std::string title = fmt::format("ratio {}: budget {} bytes, {}, overhead {}, {} evictions",
                                    RatioLabel(r), GroupedInt(res.budget), OutcomeName(res.outcome),
                                    ShortDouble(r.run.overhead), GroupedInt(res.evictions()));
    if (res.outcome == Outcome::kPass)
      plot.Circle(RowRatio(m, r), r.run.overhead, 3.2,
                  r.regime >= 0 ? fmt::format("pt-pass reg{}", r.regime % 8) : "pt-pass",
                  title + ", regime " + RegimeLabel(r));
    else if (res.outcome == Outcome::kOom)
      plot.Cross(RowRatio(m, r), ylo, 4, "pt-oom", title);
    else
      plot.Triangle(RowRatio(m, r), yhi, 5, "pt-thrash", title);
  }
  for (const ScanInversion& v : m.curve.analysis.inversions) {
    double mid = (RowRatio(m, rows[v.oom_from]) + RowRatio(m, rows[v.oom_to])) / 2;
    plot.Triangle(mid, yhi, 7, "inv-mark",
                  "feasibility inversion: OOM with feasible budgets right below and right above");
    plot.Label(mid, yhi, "inversion", "inv-label", 0, 24, "middle");
  }
  // Inversions of the atlas that the grid steps over: a mark on top, as no
  // grid point can show them.
  for (const ExactInversion& v : MissedInversions(m)) {
    double x =
        (static_cast<double>(v.first_oom_byte) + static_cast<double>(v.oom_width()) / 2) / base;
    plot.Triangle(
        x, yhi, 4, "hole-mark",
        fmt::format("feasibility inversion between grid points: {} bytes ({} wide)",
                    ByteInterval(v.first_oom_byte, v.last_oom_byte), GroupedInt(v.oom_width())));
  }
  for (const ScanCliff& c : m.curve.analysis.cliffs) {
    double x = (RowRatio(m, rows[c.lower]) + RowRatio(m, rows[c.upper])) / 2;
    double y = std::max(rows[c.lower].run.overhead, rows[c.upper].run.overhead);
    plot.Label(x, y, fmt::format("x{:.2f}", c.factor), "cliff-label", 0, -10, "middle");
  }
  return plot.Finish("budget curve: overhead against budget ratio");
}

std::string CurveLegend(const ReportModel& m) {
  bool thrash = false;
  for (const BudgetRow& r : m.rows) thrash |= r.run.result.outcome == Outcome::kThrash;
  const bool exact = m.atlas && !m.atlas->atlas.stopped;
  const bool missed = exact && !MissedInversions(m).empty();
  std::string regimes;
  std::vector<std::string> lines = RegimeLines(m);
  for (size_t i = 0; i < m.curve.analysis.regimes.size(); ++i)
    if (m.curve.analysis.regimes[i].outcome == Outcome::kPass)
      regimes += fmt::format("<span><span class=\"sw reg{}\"></span>{}</span>", i % 8, H(lines[i]));
  return std::string("<div class=\"legend\">") +
         "<span><span class=\"sw\" style=\"background:var(--pass)\"></span>feasible runs "
         "(overhead; points coloured by regime)</span>" +
         (exact ? "<span><span class=\"sw\" style=\"background:var(--oom-hard)\"></span>budgets "
                  "that fail, exact to the byte (atlas)</span>" +
                      std::string(missed ? "<span><span class=\"sw\" "
                                           "style=\"background:var(--oom)\"></span>&#9660; "
                                           "inversion between grid points</span>"
                                         : "")
                : "<span><span class=\"sw\" style=\"background:var(--oom-soft)\"></span>OOM on the "
                  "grid</span><span><span class=\"sw\" "
                  "style=\"background:var(--oom-hard)\"></span>budgets proven to OOM (exact byte "
                  "interval of the run)</span>") +
         "<span><span class=\"sw\" style=\"background:#7a1f1f\"></span>feasibility inversion</span>"
         "<span><span class=\"sw\" style=\"background:var(--remat)\"></span>cliff factor</span>" +
         (thrash ? "<span><span class=\"sw\" style=\"background:var(--thrash)\"></span>thrash "
                   "(over the overhead limit; drawn at the top)</span>"
                 : "") +
         "</div><div class=\"legend\">" + regimes + "</div>";
}

// The atlas findings and its feasibility inversions, under the budget curve.
void WriteAtlas(std::ostream& out, const ReportModel& m) {
  fmt::print(out, "<h3>Exact budget atlas</h3>");
  for (const std::string& f : AtlasFindings(m)) fmt::print(out, "<p>{}</p>", H(f));
  if (!m.curve.exact_inversions || m.curve.exact_inversions->empty()) return;
  const double base = static_cast<double>(m.trace.baseline.memory);
  fmt::print(out,
             "<table><thead><tr><th>feasibility inversion: OOM budgets (bytes)</th><th "
             "class=\"num\">width (bytes)</th><th>ratios</th><th class=\"num\">intervals</th>"
             "<th>on the grid</th></tr></thead><tbody>");
  for (const ExactInversion& v : *m.curve.exact_inversions)
    fmt::print(out,
               "<tr class=\"oom\"><td class=\"mono\">{}</td><td class=\"num\">{}</td><td "
               "class=\"mono\">{:.9f} to {:.9f}</td><td class=\"num\">{}</td><td>{}</td></tr>",
               ByteInterval(v.first_oom_byte, v.last_oom_byte), GroupedInt(v.oom_width()),
               v.first_oom_byte / base, v.last_oom_byte / base,
               v.last_interval - v.first_interval + 1,
               v.grid_inversion ? fmt::format("inversion {}", *v.grid_inversion + 1)
                                : std::string("missed by the grid"));
  fmt::print(out, "</tbody></table>");
}

std::string TimelineSvg(const ReportModel& m) {
  const MemoryTimeline& t = *m.timeline;
  double xhi = static_cast<double>(std::max<int64_t>(t.events, t.oom ? t.oom->event + 1 : 1));
  double ymax = static_cast<double>(t.budget);
  for (const TimelinePoint& p : t.points) ymax = std::max(ymax, static_cast<double>(p.memory));
  if (t.oom) ymax = std::max(ymax, static_cast<double>(t.oom->memory_usage + t.oom->request));
  SvgPlot plot(kPlotWidth, 400, 84, 20, 24, 48);
  plot.SetX({0,
             xhi,
             false,
             "computation (event index, remats included)",
             [](double v) { return GroupedInt(std::llround(v)); },
             {}});
  plot.SetY({0, ymax * 1.1, false, "memory in use", BytesAxisLabel, {}});
  plot.DrawAxes();
  std::vector<std::pair<double, double>> line;
  for (const TimelinePoint& p : t.points)
    line.push_back({static_cast<double>(p.event), static_cast<double>(p.memory)});
  plot.Line(line, "mem");
  if (t.remat_events <= 2000)
    for (const TimelinePoint& p : t.points)
      if (p.remat)
        plot.Circle(static_cast<double>(p.event), static_cast<double>(p.memory), 3.4, "remat-pt",
                    fmt::format("rematerialization at event {}: {} bytes in use", p.event,
                                GroupedInt(p.memory)));
  for (int64_t e : t.decision_events) {
    double px = plot.X(static_cast<double>(e));
    plot.PixelLine(px, plot.bottom(), px, plot.bottom() - 7, "decision");
  }
  plot.HLine(static_cast<double>(t.budget), "budget",
             fmt::format("budget {}", HumanBytes(t.budget)));
  if (t.oom) {
    double x = static_cast<double>(t.oom->event);
    double need = static_cast<double>(t.oom->memory_usage + t.oom->request);
    plot.PixelLine(plot.X(x), plot.Y(static_cast<double>(t.oom->memory_usage)), plot.X(x),
                   plot.Y(need), "oom-need");
    plot.Cross(x, need, 6, "oom-mark",
               fmt::format("OOM: {} needs {} bytes with {} in use", t.oom->op,
                           GroupedInt(t.oom->request), GroupedInt(t.oom->memory_usage)));
    bool right_side = plot.X(x) > (plot.left() + plot.right()) / 2;
    plot.Label(x, need, fmt::format("OOM: {} needs {}", t.oom->op, HumanBytes(t.oom->request)),
               "oom-label", right_side ? -10 : 10, -8, right_side ? "end" : "start");
  }
  return plot.Finish("memory timeline of the selected run");
}

std::string TimelineLegend() {
  return "<div class=\"legend\">"
         "<span><span class=\"sw\" style=\"background:var(--pass)\"></span>memory right after each "
         "computation</span>"
         "<span><span class=\"sw\" "
         "style=\"background:var(--remat)\"></span>rematerialization</span>"
         "<span><span class=\"sw\" style=\"background:#7d8799\"></span>heuristic eviction (tick on "
         "the axis)</span>"
         "<span><span class=\"sw\" style=\"background:var(--oom)\"></span>budget and OOM "
         "point</span>"
         "</div>";
}

// Cumulative bars: what is held when each pending frame is reached, against
// the budget line; the last bar adds the request that did not fit.
std::string FrontierSvg(const Trace& trace, const ReportModel& m, const OomFrontier& f) {
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
  auto op_name = [&](const FrontierFrame& fr) { return trace.op_of(fr.tensor).name; };
  // Runs of three or more frames that lock nothing new (their arguments are
  // being rematerialized, or already held above) are drawn as one row.
  for (size_t i = 0; i < r.frames.size();) {
    size_t j = i;
    while (j < r.frames.size() && r.frames[j].new_locked_bytes == 0) ++j;
    if (j - i >= 3) {
      std::string ops;
      for (size_t k = i; k < j && k < i + 12; ++k)
        ops += fmt::format("\n  depth {}: {}", r.frames[k].depth, op_name(r.frames[k]));
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
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    double y = plot.top() + 4 + static_cast<double>(i) * row_h;
    double h = row_h - 6;
    plot.PixelLine(12, y + row_h - 3, plot.right() + value_w - 8, y + row_h - 3, "row-sep");
    if (b.from > 0)
      plot.PixelRect(plot.X(0), y, plot.X(static_cast<double>(b.from)) - plot.X(0), h, "bar-ghost",
                     "");
    plot.PixelRect(
        plot.X(static_cast<double>(b.from)), y,
        std::max(1.0, plot.X(static_cast<double>(b.to)) - plot.X(static_cast<double>(b.from))), h,
        b.css, b.title);
    std::string label = b.label.size() > 52 ? b.label.substr(0, 50) + "..." : b.label;
    plot.PixelText(12, y + h - 4, label, "row-label");
    plot.PixelText(plot.right() + 8, y + h - 4, b.value, "row-value");
  }
  double bx = plot.X(static_cast<double>(budget));
  plot.PixelLine(bx, plot.top() - 8, bx, plot.bottom(), "budget");
  plot.PixelText(bx + 4, plot.top() - 12, fmt::format("budget {}", HumanBytes(budget)),
                 "budget-label");
  return plot.Finish("pinned frontier of an OOM: cumulative held memory against the budget");
}

void WriteSummary(std::ostream& out, const ReportModel& m) {
  int pass = 0, oom = 0, thrash = 0;
  for (const BudgetRow& r : m.rows) {
    pass += r.run.result.outcome == Outcome::kPass;
    oom += r.run.result.outcome == Outcome::kOom;
    thrash += r.run.result.outcome == Outcome::kThrash;
  }
  const std::vector<ScanInversion>& inversions = m.curve.analysis.inversions;
  size_t inversion_runs = 0;
  for (const ScanInversion& v : inversions) inversion_runs += v.oom_to - v.oom_from + 1;
  const size_t missed = MissedInversions(m).size();
  const TraceFacts& t = m.trace;
  fmt::print(out, "<section id=\"summary\"><h2>Trace and baseline</h2><div class=\"cards\">");
  auto card = [&](const std::string& k, const std::string& v, const std::string& d, bool alert) {
    fmt::print(out,
               "<div class=\"card{}\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div "
               "class=\"d\">{}</div></div>",
               alert ? " alert" : "", H(k), H(v), H(d));
  };
  card("baseline memory", HumanBytes(t.baseline.memory),
       GroupedInt(t.baseline.memory) + " bytes (peak)", false);
  card("baseline compute", GroupedInt(t.baseline.compute), "model compute at infinite budget",
       false);
  card("operators", GroupedInt(t.operators),
       fmt::format("{} tensors, {} storages, {} constants", GroupedInt(t.tensors),
                   GroupedInt(t.storages), GroupedInt(t.constants)),
       false);
  card(
      "runs", GroupedInt(static_cast<int64_t>(m.rows.size())),
      fmt::format("{} pass, {} OOM{}", pass, oom, thrash ? fmt::format(", {} thrash", thrash) : ""),
      false);
  card("feasibility inversions", std::to_string(inversions.size()),
       fmt::format("{} OOM run{} between feasible budgets{}", inversion_runs,
                   inversion_runs == 1 ? "" : "s",
                   missed ? fmt::format("; {} more between grid points (atlas)", missed) : ""),
       !inversions.empty() || missed > 0);
  card("cliffs", std::to_string(m.curve.analysis.cliffs.size()),
       fmt::format("overhead jumps of more than x{}", ShortDouble(m.cliff_factor)), false);
  fmt::print(out,
             "</div><p class=\"note\">Constant memory {} bytes; bottleneck memory (largest "
             "operator with its "
             "inputs) {} bytes. Every budget is <code>int(baseline memory &times; ratio)</code>, "
             "as simrd computes "
             "it.</p></section>\n",
             GroupedInt(t.baseline.const_memory), GroupedInt(t.baseline.bottleneck_memory));
}

std::string VerdictCell(const ReportModel& m, size_t run) {
  const BudgetVerdict* v = VerdictOf(m, run);
  if (!v) return "";
  return fmt::format("<a href=\"#verdict-{}\" class=\"verdict-{}\">{}</a>", run,
                     H(VerdictLabel(*v)), H(VerdictLabel(*v)));
}

// Whether the certificate's recorded check holds, and what checked it.
std::string CheckedCell(const BudgetVerdict& v) {
  const std::optional<Certificate>& c = v.classification.certificate;
  if (!c) return "no";
  return fmt::format("{} ({})", c->Holds() ? "yes" : "NO", CheckedByName(c->checked_by));
}

void WriteRunsTable(std::ostream& out, const ReportModel& m) {
  fmt::print(out,
             "<section id=\"runs\"><h2>Runs per budget</h2><div class=\"scroll\"><table><thead><tr>"
             "<th class=\"num\">ratio</th><th class=\"num\">budget (bytes)</th><th>result</th>"
             "<th class=\"num\">overhead</th><th>regime</th><th>verdict</th>"
             "<th class=\"num\">evictions</th>"
             "<th class=\"num\">per evicted storage</th><th class=\"num\">heuristic evals</th>"
             "<th>same run for every budget in (bytes)</th></tr></thead><tbody>\n");
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const BudgetRow& row = m.rows[i];
    const RunResult& r = row.run.result;
    std::string cls = row.inversion ? "inversion" : r.outcome == Outcome::kOom ? "oom" : "";
    if (m.timeline && m.timeline->run == i) cls += " selected";
    fmt::print(
        out,
        "<tr class=\"{}\" id=\"run-{}\"><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td>{}{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"mono\">{}</td></tr>\n",
        cls, i, H(RatioLabel(row)), GroupedInt(r.budget), Badge(r.outcome),
        row.inversion ? "<span class=\"badge inv\">inversion</span>" : "",
        r.outcome == Outcome::kPass
            ? fmt::format("{:.4f}", row.run.overhead)
            : fmt::format("<span class=\"note\">({:.4f} at failure)</span>", row.run.overhead),
        H(RegimeLabel(row)), VerdictCell(m, i), GroupedInt(r.evictions()),
        r.distinct_evicted ? fmt::format("{:.2f}", m.curve.points[i].evictions_per_storage()) : "-",
        GroupedInt(r.heuristic_evals), ByteInterval(r.budget_lo, r.budget_hi));
  }
  fmt::print(
      out,
      "</tbody></table></div><p class=\"note\">Overhead is the final clock over the baseline "
      "compute "
      "(the clock starts at 1, so a run without rematerialization has overhead 1 + 1/compute). "
      "Evictions count heuristic and eager evictions; \"per evicted storage\" is evictions over "
      "distinct "
      "evicted storages. The last column is the exact interval of budgets for which the replay "
      "makes "
      "every memory comparison the same way: the whole interval has this outcome.</p></section>\n");
}

void WriteFrontiers(std::ostream& out, const Trace& trace, const ReportModel& m) {
  fmt::print(out, "<section id=\"frontier\"{}><h2>Pinned frontier of each OOM</h2>",
             m.frontiers ? "" : " class=\"pending\"");
  if (!m.frontiers) {
    fmt::print(out, "<p>{}</p></section>\n", H(NotComputed(m.frontiers_skipped)));
    return;
  }
  const std::vector<OomFrontier>& frontiers = *m.frontiers;
  if (frontiers.empty()) {
    fmt::print(out, "<p>No run ran out of memory.</p></section>\n");
    return;
  }
  fmt::print(out,
             "<p class=\"note\">At an OOM the eviction pool is empty: everything in memory is "
             "pinned or locked "
             "by a pending (recursive) materialization. Each bar adds the storages first locked by "
             "one pending "
             "frame, from the program operator down to the innermost rematerialization; the last "
             "bar adds the "
             "allocation that did not fit. One chart per distinct OOM run.</p>");
  for (size_t k = 0; k < frontiers.size(); ++k) {
    const OomFrontier& f = frontiers[k];
    bool inversion = false;
    for (size_t i : f.runs) inversion |= m.rows[i].inversion.has_value();
    const BudgetVerdict* v = VerdictOf(m, f.runs.front());
    fmt::print(out, "<h3>OOM {} of {}: ratio {}{}{}</h3><p>{}</p>", k + 1, frontiers.size(),
               H(RatioLabel(m.rows[f.runs.front()])),
               inversion ? " <span class=\"badge inv\">inversion</span>" : "",
               v ? fmt::format(" &middot; verdict at {}: {}", H(RatioLabel(m.rows[f.runs.front()])),
                               VerdictCell(m, f.runs.front()))
                 : "",
               H(FrontierSummary(trace, m, f)));
    fmt::print(out, "{}\n", FrontierSvg(trace, m, f));
  }
  fmt::print(
      out,
      "<div class=\"legend\">"
      "<span><span class=\"sw\" style=\"background:var(--pinned)\"></span>pinned</span>"
      "<span><span class=\"sw\" style=\"background:var(--locked)\"></span>locked by the "
      "frame</span>"
      "<span><span class=\"sw\" style=\"background:var(--oom)\"></span>request that did not "
      "fit</span>"
      "<span><span class=\"sw\" style=\"background:#e8ecf3\"></span>held by the frames above</span>"
      "</div></section>\n");
}

}  // namespace

void WriteHtmlReport(std::ostream& out, const Trace& trace, const ReportModel& m) {
  fmt::print(out,
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             "<title>dtrcheck report: {}</title><style>{}</style></head><body><main>\n",
             H(m.trace.name), kStyle);
  fmt::print(out,
             "<header><h1>dtrcheck report: {}</h1><p class=\"sub\">{} &middot; heuristic <b>{}</b> "
             "on <b>{}</b> "
             "&middot; ratios <code>{}</code>{}</p></header>\n",
             H(m.trace.name), H(m.trace.source), H(m.heuristic), H(m.runtime), H(m.ratios_text),
             m.overhead_limit
                 ? fmt::format(" &middot; overhead limit {}", ShortDouble(*m.overhead_limit))
                 : "");
  WriteSummary(out, m);

  fmt::print(out, "<section id=\"curve\"><h2>Budget curve</h2><ul class=\"findings\">");
  for (const std::string& f : CurveFindings(m)) fmt::print(out, "<li>{}</li>", H(f));
  fmt::print(out, "</ul>{}\n{}", BudgetCurveSvg(m), CurveLegend(m));
  WriteAtlas(out, m);
  fmt::print(out, "</section>\n");

  WriteRunsTable(out, m);

  if (m.timeline) {
    fmt::print(
        out, "<section id=\"timeline\"><h2>Memory timeline</h2><p>{}</p>{}\n{}{}</section>\n",
        H(TimelineSummary(m)), TimelineSvg(m), TimelineLegend(),
        m.timeline->reduced
            ? "<p class=\"note\">The run is long: each of the plot's columns shows the lowest "
              "and the highest memory of its events.</p>"
            : "");
  }
  WriteFrontiers(out, trace, m);

  fmt::print(out,
             "<section id=\"verdicts\" class=\"{}\"><h2>Verdicts and certificates</h2><p>{}</p>",
             m.verdicts ? "" : "pending", HCode(VerdictsIntro(m)));
  if (m.verdicts && !m.verdicts->empty()) {
    fmt::print(
        out,
        "<div class=\"scroll\"><table><thead><tr><th class=\"num\">ratio</th><th "
        "class=\"num\">budget (bytes)</th><th>verdict</th><th>certificate</th><th>checked</th>"
        "</tr></thead><tbody>");
    for (const BudgetVerdict& v : *m.verdicts)
      fmt::print(out,
                 "<tr id=\"verdict-{}\"><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                 "class=\"verdict-{}\">{}</td><td>{}<br><code>{}</code></td><td>{}</td></tr>",
                 v.run, H(RatioLabel(m.rows[v.run])), GroupedInt(v.classification.budget),
                 H(VerdictLabel(v)), H(VerdictLabel(v)), H(CertificateOrReason(trace, v)),
                 H(v.command), CheckedCell(v));
    fmt::print(out, "</tbody></table></div>");
  }
  fmt::print(out,
             "</section>\n<section id=\"divergence\" class=\"{}\"><h2>Divergence between "
             "regimes</h2><p>{}</p>",
             m.divergence ? "" : "pending", HCode(DivergenceIntro(m)));
  if (m.divergence) {
    for (const RegimeDivergence& d : *m.divergence)
      fmt::print(out, "<h3>{}</h3><p>{}</p><p><code>{}</code></p><pre class=\"diff\">{}</pre>",
                 H(DivergenceTitle(m, d)), H(DivergenceSummary(trace, d.comparison)), H(d.command),
                 H(DiffText(trace, m, d)));
  }
  fmt::print(
      out,
      "</section>\n<footer>Generated by dtrcheck (report schema version {}); the same data is in "
      "report.json and report.md beside this file.</footer>\n</main></body></html>\n",
      kReportSchemaVersion);
}

}  // namespace dtr
