#include "reports/html_report.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>

#include "reports/instability_report.h"
#include "reports/number_format.h"
#include "reports/proof_report.h"
#include "reports/report_figures.h"
#include "reports/report_headline.h"
#include "reports/report_json.h"
#include "reports/report_text.h"
#include "reports/svg_plot.h"

namespace dtr {

namespace {

// No web fonts: the system's own sans-serif and monospace faces. Nothing is
// hidden: no box scrolls, tables and code wrap instead of overflowing, and
// the print style keeps every row and figure on paper.
constexpr const char* kPageStyle = R"css(
:root { --ink:#1d2330; --muted:#5b6475; --line:#d9dee7; --bg:#f6f7f9; --card:#ffffff;
  --fail:#d55e00; --fail-row:#fbede4; --inv-row:#f6d9c7; --inv:#7a1f1f; --pass:#0072b2; --thrash:#6f6f6f; }
* { box-sizing:border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; }
main { max-width:1200px; margin:0 auto; padding:24px 28px 48px; }
header h1 { font-size:26px; margin:8px 0 4px; }
header p.sub { color:var(--muted); margin:0 0 18px; overflow-wrap:anywhere; }
code, .mono, td.num { font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono",monospace; }
code { overflow-wrap:anywhere; }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:18px 22px;
  margin:18px 0; }
section h2 { font-size:19px; margin:0 0 10px; }
section h3 { font-size:16px; margin:18px 0 6px; }
.cards { display:flex; flex-wrap:wrap; gap:12px; margin:4px 0 0; }
.card { flex:1 1 150px; border:1px solid var(--line); border-radius:8px; padding:10px 14px; background:#fbfcfd; }
.card .k { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.card .v { font-size:20px; font-weight:600; }
.card .d { color:var(--muted); font-size:12px; }
.card.alert .v { color:var(--fail); }
ul.findings { margin:6px 0 12px; padding-left:20px; }
ul.findings li { margin:3px 0; }
table { border-collapse:collapse; width:100%; font-size:13px; table-layout:auto; }
th, td { padding:4px 7px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top;
  overflow-wrap:anywhere; }
th { background:#f0f2f6; overflow-wrap:normal; hyphens:auto; }
td.num, th.num { text-align:right; }
td.num { white-space:nowrap; }
td.interval { font-size:12px; overflow-wrap:normal; }
tr.oom td { background:var(--fail-row); }
tr.inversion td { background:var(--inv-row); }
tr.timeline td:first-child { box-shadow:inset 4px 0 0 var(--ink); }
.badge { display:inline-block; padding:0 7px; border-radius:9px; font-size:12px; font-weight:600; color:#fff;
  white-space:nowrap; }
.badge.pass { background:var(--pass); } .badge.oom { background:var(--fail); }
.badge.thrash { background:var(--thrash); } .badge.inv { background:var(--inv); margin-left:4px; }
.badge.src { background:#e8ebf1; color:var(--ink); font-weight:500; }
.pending { border-style:dashed; background:#fbfbfc; }
.pending p { color:var(--muted); }
.note { color:var(--muted); font-size:13px; }
figure { margin:10px 0 16px; }
figure svg.plot { display:block; width:100%; height:auto; }
figcaption { color:var(--muted); font-size:13px; margin-top:2px; }
pre.diff { background:#f6f7f9; border:1px solid var(--line); border-radius:6px; padding:8px 10px;
  font-size:12px; white-space:pre-wrap; overflow-wrap:anywhere; }
.verdict-policy-induced { color:#006b4f; font-weight:600; } .verdict-inherent { color:var(--fail); font-weight:600; }
.verdict-undetermined { color:var(--muted); font-weight:600; }
.verdict-policy-induced, .verdict-inherent, .verdict-undetermined { white-space:nowrap; }
section.answer { border-color:#9fb3cc; }
dl.headline { display:grid; grid-template-columns:max-content 1fr; gap:3px 14px; margin:0 0 6px; font-size:14.5px; }
dl.headline dt { font-weight:700; white-space:nowrap; }
dl.headline dd { margin:0; overflow-wrap:anywhere; }
details.diff { margin:6px 0; border-top:1px solid var(--line); padding-top:4px; }
details.diff summary { cursor:pointer; }
nav.toc { font-size:13px; color:var(--muted); margin:0 0 6px; }
nav.toc a { color:var(--ink); margin-right:12px; }
footer { color:var(--muted); font-size:12px; text-align:center; margin-top:24px; }
.readout { position:absolute; display:none; pointer-events:none; background:#1d2330; color:#fff; font-size:12px;
  padding:2px 7px; border-radius:4px; white-space:nowrap; }
svg.plot[data-map] { cursor:crosshair; }
svg.plot .zoom-select { fill:rgba(0,114,178,0.12); stroke:#0072b2; stroke-width:1; }
@media print {
  @page { size:A4 landscape; margin:12mm; }
  body { background:#fff; font-size:10.5pt; }
  main { max-width:none; padding:0; }
  section { border:none; border-top:1px solid #999; border-radius:0; padding:8px 0; margin:10px 0;
    break-inside:auto; }
  section h2, section h3 { break-after:avoid; }
  figure { break-inside:avoid; }
  table { font-size:8.5pt; }
  thead { display:table-header-group; }
  tr { break-inside:avoid; }
  pre.diff { font-size:8pt; break-inside:auto; }
  .card { break-inside:avoid; }
  nav.toc, .readout { display:none; }
  a { color:inherit; text-decoration:none; }
}
)css";

// The page's only script, inline: on every figure with a data-map (the
// budget curve and the timeline, reports/svg_plot.h), the data values under
// the pointer; drag a box to zoom into it (the drawing is magnified as it
// is, so nothing is stretched), double-click to see it whole again. Without
// scripts, and on paper, the figures are the same static drawings.
constexpr const char* kPageScript = R"js(
(function () {
  var tip = document.createElement('div');
  tip.className = 'readout';
  document.body.appendChild(tip);
  function group(n) { return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function bytes(b) {
    var u = ['B', 'kB', 'MB', 'GB', 'TB'], i = 0;
    while (Math.abs(b) >= 1000 && i < 4) { b /= 1000; i++; }
    return (i ? b.toFixed(2) : b.toFixed(0)) + ' ' + u[i];
  }
  function value(p, a, b, lo, hi, log) {
    var f = (p - a) / (b - a);
    return log ? Math.exp(Math.log(lo) + f * (Math.log(hi) - Math.log(lo))) : lo + f * (hi - lo);
  }
  document.querySelectorAll('svg.plot[data-map]').forEach(function (svg) {
    var m = svg.getAttribute('data-map').split(' ').map(Number);
    var units = svg.getAttribute('data-units').split(' ');
    var base = Number(svg.getAttribute('data-base'));
    var whole = svg.getAttribute('viewBox'), start = null;
    var box = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    box.setAttribute('class', 'zoom-select');
    function at(e) {
      var p = svg.createSVGPoint();
      p.x = e.clientX; p.y = e.clientY;
      return p.matrixTransform(svg.getScreenCTM().inverse());
    }
    function inside(p) { return p.x >= m[0] && p.x <= m[1] && p.y >= m[5] && p.y <= m[6]; }
    svg.addEventListener('mousemove', function (e) {
      var p = at(e);
      if (start) {
        box.setAttribute('x', Math.min(p.x, start.x)); box.setAttribute('y', Math.min(p.y, start.y));
        box.setAttribute('width', Math.abs(p.x - start.x)); box.setAttribute('height', Math.abs(p.y - start.y));
      }
      if (!inside(p)) { tip.style.display = 'none'; return; }
      var x = value(p.x, m[0], m[1], m[2], m[3], m[4]), y = value(p.y, m[6], m[5], m[7], m[8], m[9]);
      var xs = units[0] === 'ratio' ? 'ratio ' + x.toFixed(5) + (base ? ' (' + group(x * base) + ' B)' : '')
                                    : 'step ' + group(x);
      var ys = units[1] === 'overhead' ? 'overhead ' + y.toFixed(3) : bytes(y);
      tip.textContent = xs + ', ' + ys;
      tip.style.display = 'block';
      tip.style.left = (e.pageX + 14) + 'px';
      tip.style.top = (e.pageY + 14) + 'px';
    });
    svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
    svg.addEventListener('mousedown', function (e) {
      var p = at(e);
      if (!inside(p)) return;
      start = p;
      box.setAttribute('width', 0); box.setAttribute('height', 0);
      svg.appendChild(box);
      e.preventDefault();
    });
    svg.addEventListener('mouseup', function (e) {
      if (!start) return;
      var p = at(e), w = Math.abs(p.x - start.x), h = Math.abs(p.y - start.y);
      var x = Math.min(p.x, start.x), y = Math.min(p.y, start.y);
      start = null;
      if (box.parentNode) svg.removeChild(box);
      if (w < 6) return;
      // Keep the figure's shape: widen the shorter side of the box.
      var v = whole.split(' ').map(Number), aspect = v[3] / v[2];
      if (h < w * aspect) { y -= (w * aspect - h) / 2; h = w * aspect; } else { x -= (h / aspect - w) / 2; w = h / aspect; }
      svg.setAttribute('viewBox', [x, y, w, h].join(' '));
    });
    svg.addEventListener('dblclick', function () { svg.setAttribute('viewBox', whole); });
  });
})();
)js";

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

std::string FigureHtml(const Figure& f) {
  return fmt::format("<figure id=\"fig-{}\">{}<figcaption>{}</figcaption></figure>\n", f.name,
                     f.svg, H(f.caption));
}

// Section ids: "runs", "timeline", ... for the first heuristic, "runs-LRU"
// for the others.
std::string Id(const BudgetReport& r, size_t k, const char* base) {
  return k == 0 ? std::string(base) : fmt::format("{}-{}", base, r.heuristics[k].heuristic);
}

// "" with one heuristic, else " (DTR)" to append to a section title.
std::string Of(const BudgetReport& r, size_t k) {
  return r.heuristics.size() > 1 ? " (" + H(r.heuristics[k].heuristic) + ")" : "";
}

void WriteSummary(std::ostream& out, const BudgetReport& r) {
  const TraceFacts& t = r.heuristics.front().trace;
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
  for (const ReportModel& m : r.heuristics) {
    const std::string who = r.heuristics.size() > 1 ? m.heuristic + ": " : "";
    int pass = 0, oom = 0, thrash = 0, added = 0;
    for (const BudgetRow& row : m.rows) {
      pass += row.run.result.outcome == Outcome::kPass;
      oom += row.run.result.outcome == Outcome::kOom;
      thrash += row.run.result.outcome == Outcome::kThrash;
      added += row.source != RowSource::kGrid;
    }
    const size_t inversions = m.curve.analysis.inversions.size();
    size_t exact = m.curve.exact_inversions ? m.curve.exact_inversions->size() : 0;
    card(who + "runs", GroupedInt(static_cast<int64_t>(m.rows.size())),
         fmt::format("{} pass, {} OOM{}{}", pass, oom, thrash ? fmt::format(", {} thrash", thrash) : "",
                     added ? fmt::format("; {} added from the atlas", added) : ""),
         false);
    card(who + "feasibility inversions", std::to_string(inversions),
         m.atlas ? fmt::format("{} in the rows; {} exact in the walked budgets", inversions, exact)
                 : fmt::format("{} in the rows (no atlas)", inversions),
         inversions > 0 || exact > 0);
    card(who + "cliffs", std::to_string(m.curve.analysis.cliffs.size()),
         fmt::format("overhead jumps of more than x{}", ShortDouble(m.cliff_factor)), false);
    if (m.atlas) {
      const AtlasCoverage& a = *m.atlas;
      card(who + "exact atlas",
           fmt::format("{:.1f}%", 100.0 * static_cast<double>(a.covered()) /
                                      static_cast<double>(a.hi - a.lo + 1)),
           fmt::format("of the range walked, {} replays{}",
                       GroupedInt(static_cast<int64_t>(a.replays)),
                       a.budget_ran_out ? "; the cap was reached" : ""),
           a.budget_ran_out);
    } else {
      card(who + "exact atlas", "off", m.atlas_skipped, false);
    }
  }
  fmt::print(out,
             "</div><p class=\"note\">Constant memory {} bytes; bottleneck memory (largest "
             "operator with its inputs) {} bytes. Every budget of a ratio is <code>int(baseline "
             "memory &times; ratio)</code>, as simrd computes it.</p></section>\n",
             GroupedInt(t.baseline.const_memory), GroupedInt(t.baseline.bottleneck_memory));
}

// The atlas findings and its feasibility inversions, under the budget curve.
void WriteAtlas(std::ostream& out, const ReportModel& m, const std::string& title) {
  fmt::print(out, "<h3>{}</h3>", title);
  for (const std::string& f : AtlasFindings(m)) fmt::print(out, "<p>{}</p>", H(f));
  std::vector<std::string> added = AddedRowLines(m);
  if (!added.empty()) {
    fmt::print(out, "<ul class=\"findings\">");
    for (const std::string& a : added) fmt::print(out, "<li>{}</li>", H(a));
    fmt::print(out, "</ul>");
  }
  if (!m.curve.exact_inversions || m.curve.exact_inversions->empty()) return;
  const double base = static_cast<double>(m.trace.baseline.memory);
  fmt::print(out,
             "<table><thead><tr><th>feasibility inversion: OOM budgets (bytes)</th><th "
             "class=\"num\">width (bytes)</th><th>ratios</th><th class=\"num\">intervals</th>"
             "<th>in the rows</th></tr></thead><tbody>");
  for (const AtlasInversion& a : *m.curve.exact_inversions) {
    const ExactInversion& v = a.where;
    fmt::print(out,
               "<tr class=\"oom\"><td class=\"mono\">{}</td><td class=\"num\">{}</td><td "
               "class=\"mono\">{:.9f} to {:.9f}</td><td class=\"num\">{}</td><td>{}</td></tr>",
               ByteInterval(v.first_oom_byte, v.last_oom_byte), GroupedInt(v.oom_width()),
               static_cast<double>(v.first_oom_byte) / base, static_cast<double>(v.last_oom_byte) / base,
               v.last_interval - v.first_interval + 1,
               v.grid_inversion ? fmt::format("inversion {}", *v.grid_inversion + 1)
                                : std::string("between the rows"));
  }
  fmt::print(out, "</tbody></table>");
}

std::string VerdictCell(const ReportModel& m, size_t run, const std::string& id_suffix) {
  const BudgetVerdict* v = VerdictOf(m, run);
  if (!v) return "";
  return fmt::format("<a href=\"#verdict-{}{}\" class=\"verdict-{}\">{}</a>", run, id_suffix,
                     H(VerdictLabel(*v)), H(VerdictLabel(*v)));
}

// Whether the certificate's recorded check holds, and what checked it.
std::string CheckedCell(const BudgetVerdict& v) {
  const std::optional<Certificate>& c = v.classification.certificate;
  if (!c) return "no";
  return fmt::format("{} ({})", c->Holds() ? "yes" : "NO", CheckedByName(c->checked_by));
}

// The rows' ratio column: the grid's text, or for a byte row its ratio to
// nine decimals (the budget column has its exact bytes).
std::string RatioCell(const ReportModel& m, const BudgetRow& row) {
  if (row.run.spec.ratio) return H(row.run.spec.ratio->text);
  return fmt::format("<span class=\"note\">{:.9f}</span>", RowRatio(m, row));
}

void WriteRunsTable(std::ostream& out, const BudgetReport& r, size_t k) {
  const ReportModel& m = r.heuristics[k];
  const std::string suffix = k == 0 ? "" : "-" + m.heuristic;
  fmt::print(out,
             "<section id=\"{}\"><h2>Runs per budget{}</h2><table><thead><tr>"
             "<th class=\"num\">ratio</th><th class=\"num\">budget (bytes)</th><th>result</th>"
             "<th class=\"num\">overhead</th><th>regime</th><th>verdict</th>"
             "<th class=\"num\">evictions</th>"
             "<th class=\"num\">per evicted storage</th><th class=\"num\">heuristic evals</th>"
             "<th>row</th><th>same run for every budget in (bytes)</th></tr></thead><tbody>\n",
             Id(r, k, "runs"), Of(r, k));
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const BudgetRow& row = m.rows[i];
    const RunResult& res = row.run.result;
    std::string cls = row.inversion ? "inversion" : res.outcome == Outcome::kOom ? "oom" : "";
    for (const MemoryTimeline& t : m.timelines)
      if (t.run == i) cls += " timeline";
    fmt::print(
        out,
        "<tr class=\"{}\" id=\"run-{}{}\"><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>"
        "<td class=\"mono interval\">{}</td></tr>\n",
        cls, i, suffix, RatioCell(m, row), GroupedInt(res.budget), Badge(res.outcome),
        row.inversion ? "<span class=\"badge inv\">inversion</span>" : "",
        res.outcome == Outcome::kPass
            ? fmt::format("{:.4f}", row.run.overhead)
            : fmt::format("<span class=\"note\">({:.4f} at failure)</span>", row.run.overhead),
        H(RegimeLabel(row)), VerdictCell(m, i, suffix), GroupedInt(res.evictions()),
        res.distinct_evicted ? fmt::format("{:.2f}", m.curve.points[i].evictions_per_storage()) : "-",
        GroupedInt(res.heuristic_evals),
        row.source == RowSource::kGrid
            ? std::string("grid")
            : fmt::format("<span class=\"badge src\" title=\"{}\">{}</span>", H(row.source_reason),
                          RowSourceName(row.source)),
        ByteInterval(res.budget_lo, res.budget_hi));
  }
  fmt::print(out, "</tbody></table><ul class=\"findings\">");
  for (const std::string& line : RegimeLines(m)) fmt::print(out, "<li>{}</li>", H(line));
  fmt::print(
      out,
      "</ul><p class=\"note\">{} rows. Overhead is the final clock over the baseline compute (the "
      "clock starts at 1, so a run without rematerialization has overhead 1 + 1/compute). "
      "Evictions count heuristic and eager evictions; \"per evicted storage\" is evictions over "
      "distinct evicted storages. \"row\" says where a row comes from: the grid, a zoom grid over "
      "an inversion the grid stepped over, or an exact edge byte the atlas found. The last column "
      "is the exact interval of budgets for which the replay makes every memory comparison the "
      "same way: the whole interval has this outcome. A bar on the left marks the runs of the "
      "memory timeline.</p></section>\n",
      m.rows.size());
}

void WriteFrontiers(std::ostream& out, const Trace& trace, const BudgetReport& r, size_t k) {
  const ReportModel& m = r.heuristics[k];
  const std::string suffix = k == 0 ? "" : "-" + m.heuristic;
  fmt::print(out, "<section id=\"{}\"{}><h2>Pinned frontier of each OOM{}</h2>", Id(r, k, "frontier"),
             m.frontiers ? "" : " class=\"pending\"", Of(r, k));
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
             "pinned or locked by a pending (recursive) materialization. Each bar adds the "
             "storages first locked by one pending frame, from the program operator down to the "
             "innermost rematerialization; the last bar adds the allocation that did not fit. One "
             "chart per distinct OOM state.</p>");
  std::vector<Figure> figures = FrontierFigures(trace, r, k);
  for (size_t i = 0; i < frontiers.size(); ++i) {
    const OomFrontier& f = frontiers[i];
    bool inversion = false;
    for (size_t row : f.runs) inversion |= m.rows[row].inversion.has_value();
    fmt::print(out, "<h3>OOM {} of {}: {}{}{}</h3>", i + 1, frontiers.size(),
               H(RowPhrase(m.rows[f.runs.front()])),
               inversion ? " <span class=\"badge inv\">inversion</span>" : "",
               VerdictOf(m, f.runs.front())
                   ? " &middot; verdict: " + VerdictCell(m, f.runs.front(), suffix)
                   : "");
    fmt::print(out, "{}", FigureHtml(figures[i]));
  }
  fmt::print(out, "</section>\n");
}

void WriteTimeline(std::ostream& out, const Trace& trace, const BudgetReport& r, size_t k) {
  const ReportModel& m = r.heuristics[k];
  fmt::print(out, "<section id=\"{}\"><h2>Memory timeline{}</h2>", Id(r, k, "timeline"), Of(r, k));
  for (const std::string& s : TimelineSummary(m)) fmt::print(out, "<p>{}</p>", H(s));
  fmt::print(out, "{}", FigureHtml(TimelineFigure(r, k)));
  bool reduced = false, marks = false;
  for (const MemoryTimeline& t : m.timelines) {
    reduced |= t.reduced;
    marks |= t.marks_reduced;
  }
  if (reduced)
    fmt::print(out, "<p class=\"note\">The runs are long: the memory line keeps the lowest and "
                    "the highest memory of each bucket of computations.</p>");
  if (marks)
    fmt::print(out, "<p class=\"note\">Evictions and rematerializations are many: one mark per "
                    "bucket of computations (report.json has the counts).</p>");
  fmt::print(out, "<p>{}</p>", H(StackSummary(m)));
  for (const Figure& f : StackFigures(trace, r, k)) fmt::print(out, "{}", FigureHtml(f));
  fmt::print(out, "</section>\n");
}

void WriteVerdicts(std::ostream& out, const Trace& trace, const BudgetReport& r, size_t k) {
  const ReportModel& m = r.heuristics[k];
  const std::string suffix = k == 0 ? "" : "-" + m.heuristic;
  fmt::print(out, "<section id=\"{}\" class=\"{}\"><h2>Verdicts and certificates{}</h2><p>{}</p>",
             Id(r, k, "verdicts"), m.verdicts ? "" : "pending", Of(r, k), HCode(VerdictsIntro(m)));
  if (m.verdicts && !m.verdicts->empty()) {
    // Neighbouring rows with the same verdict are one table row; a
    // certificate shared by all of them is shown once.
    fmt::print(out,
               "<table><thead><tr><th class=\"num\">rows</th><th class=\"num\">budgets "
               "(bytes)</th><th>verdict</th><th>certificate</th><th>checked</th></tr></thead><tbody>");
    const std::vector<BudgetVerdict>& vs = *m.verdicts;
    for (size_t i = 0; i < vs.size();) {
      size_t j = i;
      while (j + 1 < vs.size() && vs[j + 1].run == vs[j].run + 1 &&
             vs[j + 1].classification.verdict == vs[i].classification.verdict)
        ++j;
      std::string anchors, certificates;
      std::vector<std::string> distinct;
      bool checked_all = true;
      for (size_t k = i; k <= j; ++k) {
        anchors += fmt::format("<span id=\"verdict-{}{}\"></span>", vs[k].run, suffix);
        std::string c = CertificateOrReason(trace, vs[k]);
        if (std::find(distinct.begin(), distinct.end(), c) == distinct.end()) distinct.push_back(c);
        checked_all &= CheckedCell(vs[k]) == CheckedCell(vs[i]);
      }
      if (distinct.size() == 1) {
        certificates = fmt::format("{}{}<br><code>{}</code>", H(distinct.front()),
                                   j > i ? fmt::format(" <span class=\"note\">(the same for all {})</span>", j - i + 1)
                                         : std::string(),
                                   H(vs[i].command));
      } else {
        certificates = fmt::format("<ul class=\"findings\">");
        for (size_t k = i; k <= j; ++k)
          certificates += fmt::format("<li>{}: {}<br><code>{}</code></li>", H(RowLabel(m.rows[vs[k].run])),
                                      H(CertificateOrReason(trace, vs[k])), H(vs[k].command));
        certificates += "</ul>";
      }
      std::string rows = H(RowLabel(m.rows[vs[i].run]));
      if (j > i) rows += fmt::format(" to {} ({})", H(RowLabel(m.rows[vs[j].run])), j - i + 1);
      fmt::print(out,
                 "<tr><td class=\"num\">{}{}</td><td class=\"num\">{}</td><td class=\"verdict-{}\">{}</td>"
                 "<td>{}</td><td>{}</td></tr>",
                 anchors, rows,
                 j > i ? fmt::format("{} to {}", GroupedInt(vs[i].classification.budget),
                                     GroupedInt(vs[j].classification.budget))
                       : GroupedInt(vs[i].classification.budget),
                 H(VerdictLabel(vs[i])), H(VerdictLabel(vs[i])), certificates,
                 checked_all ? CheckedCell(vs[i]) : std::string("see each"));
      i = j + 1;
    }
    fmt::print(out, "</tbody></table>");
  }
  fmt::print(out, "</section>\n");
}

void WriteDivergence(std::ostream& out, const Trace& trace, const BudgetReport& r, size_t k) {
  const ReportModel& m = r.heuristics[k];
  fmt::print(out, "<section id=\"{}\" class=\"{}\"><h2>Divergence between regimes{}</h2><p>{}</p>",
             Id(r, k, "divergence"), m.divergence ? "" : "pending", Of(r, k),
             HCode(DivergenceIntro(m)));
  // Each pair collapsed to its one-line summary; the full diff opens on a click.
  if (m.divergence)
    for (const RegimeDivergence& d : *m.divergence)
      fmt::print(out,
                 "<details class=\"diff\"><summary><b>{}</b>: {}</summary><p><code>{}</code></p>"
                 "<pre class=\"diff\">{}</pre></details>",
                 H(DivergenceTitle(m, d)), H(DivergenceSummary(trace, d.comparison)), H(d.command),
                 H(DiffText(trace, m, d)));
  fmt::print(out, "</section>\n");
}

}  // namespace

void WriteHtmlReport(std::ostream& out, const Trace& trace, const BudgetReport& r) {
  const ReportModel& first = r.heuristics.front();
  std::string heuristics;
  for (const ReportModel& m : r.heuristics)
    heuristics += (heuristics.empty() ? "" : ", ") + ("<b>" + H(m.heuristic) + "</b>");
  fmt::print(out,
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             "<title>dtrcheck report: {}</title><style>{}{}</style></head><body><main>\n",
             H(first.trace.name), kPageStyle, FigureStyle());
  fmt::print(out,
             "<header><h1>dtrcheck report: {}</h1><p class=\"sub\">{} &middot; heuristic{} {} "
             "on <b>{}</b> &middot; ratios <code>{}</code>{}</p></header>\n",
             H(first.trace.name), H(first.trace.source), r.heuristics.size() > 1 ? "s" : "",
             heuristics, H(first.runtime), H(first.ratios_text),
             first.overhead_limit
                 ? fmt::format(" &middot; overhead limit {}", ShortDouble(*first.overhead_limit))
                 : "");
  // The answer first: the headline and the curve where things happen.
  std::vector<Figure> curves = CurveFigures(r);
  size_t lead = 0;
  for (size_t i = 0; i < curves.size(); ++i)
    if (curves[i].name == "zoom-a") lead = i;
  fmt::print(out, "<section id=\"answer\" class=\"answer\"><h2>Answer</h2>");
  for (const ReportModel& m : r.heuristics) {
    if (r.heuristics.size() > 1) fmt::print(out, "<h3>{}</h3>", H(m.heuristic));
    fmt::print(out, "<dl class=\"headline\">");
    for (const HeadlineItem& item : HeadlineItems(m.headline))
      fmt::print(out, "<dt>{}</dt><dd>{}</dd>", H(item.label), H(item.text));
    fmt::print(out, "</dl>");
  }
  fmt::print(out, "{}</section>\n", FigureHtml(curves[lead]));
  fmt::print(out, "<nav class=\"toc\">");
  for (const char* id : {"answer", "summary", "curve", "runs", "timeline", "frontier", "verdicts", "divergence"})
    fmt::print(out, "<a href=\"#{0}\">{0}</a>", id);
  fmt::print(out, "</nav>\n");
  WriteSummary(out, r);

  fmt::print(out, "<section id=\"curve\"><h2>Budget curve</h2>");
  for (const ReportModel& m : r.heuristics) {
    if (r.heuristics.size() > 1) fmt::print(out, "<h3>{}</h3>", H(m.heuristic));
    fmt::print(out, "<ul class=\"findings\">");
    for (const std::string& f : CurveFindings(m)) fmt::print(out, "<li>{}</li>", H(f));
    fmt::print(out, "</ul>");
  }
  for (size_t i = 0; i < curves.size(); ++i)
    if (i != lead) fmt::print(out, "{}", FigureHtml(curves[i]));
  for (const ReportModel& m : r.heuristics)
    WriteAtlas(out, m,
               r.heuristics.size() > 1 ? "Exact budget atlas (" + H(m.heuristic) + ")"
                                       : std::string("Exact budget atlas"));
  fmt::print(out, "</section>\n");

  for (size_t k = 0; k < r.heuristics.size(); ++k) {
    WriteRunsTable(out, r, k);
    WriteTimeline(out, trace, r, k);
    WriteFrontiers(out, trace, r, k);
    WriteVerdicts(out, trace, r, k);
    WriteDivergence(out, trace, r, k);
  }
  fmt::print(out,
             "<footer>Generated by dtrcheck (report schema version {}); the same data is in "
             "report.json and report.md beside this file. Drag a box on the budget curve or the "
             "timeline to zoom in, double-click to zoom out.</footer>\n</main><script>{}</script></body></html>\n",
             kReportSchemaVersion, kPageScript);
}

void WriteHtmlReport(std::ostream& out, const Trace& trace, const ReportModel& model) {
  WriteHtmlReport(out, trace, BudgetReport{{model}});
}

}  // namespace dtr
