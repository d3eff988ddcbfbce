// Injected by tests/browser_check.sh into a copy of a report page (the report
// itself has no script). Measures the laid-out page and writes what it found
// into <pre id="layout-check"> as JSON, which the check reads from
// Chromium's --dump-dom:
//   width, height: the page's full size in CSS pixels;
//   viewport: the window's inner width;
//   rows: the number of table rows; hidden: rows that are not fully visible
//   (no size, display:none or visibility:hidden, or clipped by an ancestor
//   that scrolls or hides overflow), as "table#N row M: why";
//   wide: elements wider than their section (a cut last column);
//   row_boxes: [top, bottom, left, right] of every row, page coordinates;
//   print_rules: whether a style sheet has an @media print rule;
//   headline_bottom, lead_plot_bottom: where the answer's headline and its
//   figure end, page coordinates (absent without them).
(function () {
  const doc = document.documentElement;
  const out = { width: doc.scrollWidth, height: doc.scrollHeight, viewport: window.innerWidth,
                rows: 0, hidden: [], wide: [], row_boxes: [], print_rules: false };
  const tables = Array.from(document.querySelectorAll('table'));
  tables.forEach((table, t) => {
    Array.from(table.rows).forEach((tr, i) => {
      out.rows++;
      const r = tr.getBoundingClientRect();
      const where = 'table#' + t + ' row ' + i;
      out.row_boxes.push([r.top + window.scrollY, r.bottom + window.scrollY, r.left, r.right]);
      if (r.height < 1 || r.width < 1) { out.hidden.push(where + ': no size'); return; }
      for (let e = tr; e && e !== doc; e = e.parentElement) {
        const s = getComputedStyle(e);
        if (s.display === 'none' || s.visibility === 'hidden') {
          out.hidden.push(where + ': hidden by ' + e.tagName); return;
        }
        if (e !== tr && (s.overflowX !== 'visible' || s.overflowY !== 'visible')) {
          const p = e.getBoundingClientRect();
          if (r.top < p.top - 0.5 || r.bottom > p.bottom + 0.5 || r.left < p.left - 0.5 ||
              r.right > p.right + 0.5) {
            out.hidden.push(where + ': clipped by ' + e.tagName + '.' + e.className); return;
          }
        }
      }
      // Every cell's content fits its cell (nothing overflows into the next one).
      Array.from(tr.cells).forEach((td, c) => {
        if (td.scrollWidth > td.clientWidth + 1)
          out.hidden.push(where + ' cell ' + c + ': content wider than the cell');
      });
    });
  });
  document.querySelectorAll('section').forEach((sec) => {
    const p = sec.getBoundingClientRect();
    sec.querySelectorAll('table, pre, svg, figure').forEach((e) => {
      const r = e.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;  // not rendered: inside a closed <details>
      if (r.right > p.right + 0.5 || r.left < p.left - 0.5)
        out.wide.push(sec.id + ' ' + e.tagName + ' ' + Math.round(r.width) + 'px in ' +
                      Math.round(p.width) + 'px');
    });
  });
  // Where the answer ends: its headline and its figure, page coordinates.
  const headline = document.querySelector('#answer dl.headline');
  const lead = document.querySelector('#answer svg.plot');
  if (headline && lead) {
    out.headline_bottom = headline.getBoundingClientRect().bottom + window.scrollY;
    out.lead_plot_bottom = lead.getBoundingClientRect().bottom + window.scrollY;
  }
  for (const sheet of Array.from(document.styleSheets))
    for (const rule of Array.from(sheet.cssRules))
      if (rule.media && Array.from(rule.media).includes('print')) out.print_rules = true;
  const pre = document.createElement('pre');
  pre.id = 'layout-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
