// Small helpers to draw plots as inline SVG: a data-to-pixel mapping with
// linear or log axes, "nice" ticks, and primitives (bands, lines, markers,
// text) that take data coordinates. The output carries CSS classes only; the
// page that embeds it styles them (reports/html_report.cc), so the SVG has no
// script, no external reference and no font of its own.
//
// Every text is XML-escaped here; callers pass plain text.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtr {

std::string XmlEscape(std::string_view text);

// About `target` round-numbered ticks covering [lo, hi] (1, 2, 5 x 10^k steps).
std::vector<double> LinearTicks(double lo, double hi, int target);
// Powers of ten in [lo, hi], with 2x and 5x between them when there are few.
std::vector<double> LogTicks(double lo, double hi);

// Marker shapes: regimes are told apart by shape as well as colour, so that
// they read in grey and for colour-blind readers.
enum class MarkerShape { kCircle, kSquare, kDiamond, kTriangleUp, kTriangleDown, kCross, kPlus };
MarkerShape ShapeOf(int index);  // a distinct shape per index (cycling)

// A legend entry: a swatch drawn like the element it names, and its text.
struct LegendItem {
  enum class Swatch { kLine, kBand, kMarker, kTick };
  Swatch swatch = Swatch::kLine;
  std::string css_class;  // the class the element is drawn with
  MarkerShape shape = MarkerShape::kCircle;
  std::string label;
};

struct PlotAxis {
  double lo = 0, hi = 1;
  bool log = false;
  std::string label;
  std::function<std::string(double)> format;  // tick labels; default ShortDouble
  std::vector<double> ticks;                  // default: LinearTicks / LogTicks
};

class SvgPlot {
 public:
  // The plot area is the canvas less the margins; data outside the axis
  // ranges is clipped to it.
  SvgPlot(int width, int height, int margin_left = 70, int margin_right = 20, int margin_top = 20,
          int margin_bottom = 48);

  void SetX(PlotAxis axis);
  void SetY(PlotAxis axis);
  double X(double v) const;  // pixel of a data value
  double Y(double v) const;
  double left() const { return left_; }
  double right() const { return right_; }
  double top() const { return top_; }
  double bottom() const { return bottom_; }

  // Grid lines, the frame, tick labels and axis labels.
  void DrawAxes();
  // A vertical band over the whole plot height between data x0 and x1, at
  // least `min_px` wide; `title` is shown on hover.
  void VBand(double x0, double x1, const std::string& css_class, const std::string& title,
             double min_px = 0);
  void HLine(double y, const std::string& css_class, const std::string& label);
  void VLine(double x, const std::string& css_class, const std::string& label);
  // A polyline through data points (one path; pass separate calls for gaps).
  void Line(const std::vector<std::pair<double, double>>& points, const std::string& css_class);
  void Circle(double x, double y, double r_px, const std::string& css_class,
              const std::string& title);
  void Cross(double x, double y, double r_px, const std::string& css_class,
             const std::string& title);
  void Triangle(double x, double y, double r_px, const std::string& css_class,
                const std::string& title);
  void Marker(double x, double y, MarkerShape shape, double r_px, const std::string& css_class,
              const std::string& title);
  // Text at a data point, offset in pixels; anchor "start", "middle" or "end".
  void Label(double x, double y, const std::string& text, const std::string& css_class,
             double dx_px = 0, double dy_px = 0, std::string_view anchor = "start");
  // A label that must not overlap another one placed this way: drawn at the
  // first of `dy_choices` (pixel offsets from py) where its estimated box is
  // free and inside the canvas, else not drawn. Returns whether it was drawn.
  bool FreeLabel(double px, double py, const std::string& text, const std::string& css_class,
                 std::string_view anchor, const std::vector<double>& dy_choices = {0},
                 double font_px = 12.5);
  // Raw pixel-space elements, for charts that are not x/y plots.
  void PixelRect(double x, double y, double w, double h, const std::string& css_class,
                 const std::string& title);
  void PixelText(double x, double y, const std::string& text, const std::string& css_class,
                 std::string_view anchor = "start");
  void PixelLine(double x0, double y0, double x1, double y1, const std::string& css_class);
  // A path in pixel coordinates (SVG path data).
  void PixelPath(const std::string& d, const std::string& css_class, const std::string& title = "");
  void PixelMarker(double px, double py, MarkerShape shape, double r_px,
                   const std::string& css_class, const std::string& title);

  // Lets the report page's script (reports/html_report.cc) read data values
  // under the pointer and zoom: Finish writes the axes' mapping as a data-map
  // attribute, with the units the script names ("ratio" or "step" for x,
  // "overhead" or "bytes" for y) and the bytes of ratio 1 (0: none).
  void EnableReadout(std::string x_unit, std::string y_unit, double bytes_per_ratio = 0);
  // Adds a legend entry (once per label, in the order first added; at most
  // kMaxLegend entries, later ones are dropped). The legend is drawn under
  // the plot by Finish, which grows the canvas.
  static constexpr size_t kMaxLegend = 8;
  void AddLegend(LegendItem item);
  const std::vector<LegendItem>& legend() const { return legend_; }

  // The finished <svg> element; `title` is its accessible name. With
  // `style`, a standalone SVG document: the style sheet is embedded and the
  // background painted, so the file renders alone (--figures).
  std::string Finish(const std::string& title, std::string_view style = {}) const;
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  double Clamp(double px, double lo, double hi) const;

  int width_, height_;
  double left_, right_, top_, bottom_;
  PlotAxis x_, y_;
  std::string body_;
  std::vector<LegendItem> legend_;
  struct Box {
    double x0, y0, x1, y1;
  };
  std::vector<Box> labels_;  // FreeLabel's placed labels
  std::string readout_;      // the data attributes of EnableReadout, or empty
};

}  // namespace dtr
