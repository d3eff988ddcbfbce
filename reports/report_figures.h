// The report's figures, as SVG (reports/svg_plot.h). Each carries its own
// legend, built from what the figure actually draws (an element that is not
// drawn has no entry). The HTML page inlines them; `dtrcheck report --figures
// DIR` writes each as a standalone SVG file (style sheet embedded) for
// papers and slides.
//
//  - "curve": overhead against budget ratio for every heuristic: the exact
//    overhead of every walked budget (the atlas, a step line), the rows as
//    markers (shape and colour by regime for one heuristic, by heuristic for
//    several), the budgets that fail as bands, the baseline (overhead 1),
//    inversion and cliff marks, and under the plot one strip per heuristic
//    showing what the atlas walked and where it fails;
//  - "zoom-a", "zoom-b", ...: the same drawing over narrower ranges, when
//    what the atlas found sits in a small part of the range, or is narrower
//    than two pixels (ResNet-32's holes of 128 bytes); boxed and lettered on
//    the figure they zoom from;
//  - "timeline": the memory of the report's timeline runs against the
//    program step, overlaid, with every heuristic eviction on the line, lanes
//    of evictions and rematerializations under it, the budgets, where the two
//    runs part ways and the OOM;
//  - "stack-storage", "stack-module": the memory of one timeline run stacked
//    by storage, and by top-level module for a trace with modules
//    (diagnose/memory_stack.h), against the same program steps;
//  - "frontier-N": the pinned frontier of each distinct OOM state.
// With several heuristics, the timeline, stack and frontier names end in
// "-HEURISTIC".
#pragma once

#include <string>
#include <vector>

#include "diagnose/report_model.h"
#include "model/trace.h"

namespace dtr {

struct Figure {
  std::string name;     // file stem, see above
  std::string title;    // accessible name
  std::string caption;  // one sentence under it
  std::string svg;      // inline <svg>, styled by FigureStyle()
  std::string standalone;  // the same as a standalone SVG document
};

// The style sheet of every figure (inline ones get it from the page).
const std::string& FigureStyle();

// The budget curve and its zooms, in that order.
std::vector<Figure> CurveFigures(const BudgetReport& report);
// The memory timeline of model `k` of the report.
Figure TimelineFigure(const BudgetReport& report, size_t k);
// The stacked memory of model `k`: by storage, then by module if the trace has modules.
std::vector<Figure> StackFigures(const Trace& trace, const BudgetReport& report, size_t k);
// One per distinct OOM state of model `k`, in the order of its frontiers.
std::vector<Figure> FrontierFigures(const Trace& trace, const BudgetReport& report, size_t k);

}  // namespace dtr
