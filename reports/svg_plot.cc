#include "reports/svg_plot.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "reports/number_format.h"

namespace dtr {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

MarkerShape ShapeOf(int index) {
  static constexpr MarkerShape kShapes[] = {MarkerShape::kCircle,     MarkerShape::kSquare,
                                            MarkerShape::kDiamond,    MarkerShape::kTriangleUp,
                                            MarkerShape::kTriangleDown, MarkerShape::kPlus,
                                            MarkerShape::kCross};
  constexpr int n = sizeof(kShapes) / sizeof(kShapes[0]);
  return kShapes[((index % n) + n) % n];
}

std::vector<double> LinearTicks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || target < 1) return {lo};
  double raw = (hi - lo) / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag * 1.0000001) {
      step = m * mag;
      break;
    }
  double first = std::ceil(lo / step - 1e-9) * step;
  for (double v = first; v <= hi + step * 1e-9; v += step)
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

std::vector<double> LogTicks(double lo, double hi) {
  if (!(lo > 0) || !(hi > lo)) return {lo};
  int a = static_cast<int>(std::floor(std::log10(lo))),
      b = static_cast<int>(std::ceil(std::log10(hi)));
  if (b - a < 1) return LinearTicks(lo, hi, 5);
  std::vector<double> ticks;
  std::vector<double> mults = b - a <= 2 ? std::vector<double>{1, 2, 5} : std::vector<double>{1};
  for (int e = a; e <= b; ++e)
    for (double m : mults) {
      double v = m * std::pow(10.0, e);
      if (v >= lo * 0.999999 && v <= hi * 1.000001) ticks.push_back(v);
    }
  if (ticks.size() < 2) return LinearTicks(lo, hi, 5);
  return ticks;
}

SvgPlot::SvgPlot(int width, int height, int margin_left, int margin_right, int margin_top,
                 int margin_bottom)
    : width_(width),
      height_(height),
      left_(margin_left),
      right_(width - margin_right),
      top_(margin_top),
      bottom_(height - margin_bottom) {}

void SvgPlot::SetX(PlotAxis axis) { x_ = std::move(axis); }
void SvgPlot::SetY(PlotAxis axis) { y_ = std::move(axis); }

namespace {

double Fraction(const PlotAxis& a, double v) {
  if (a.log) {
    double lo = std::log10(a.lo), hi = std::log10(a.hi);
    return hi > lo ? (std::log10(std::max(v, a.lo * 1e-6)) - lo) / (hi - lo) : 0.5;
  }
  return a.hi > a.lo ? (v - a.lo) / (a.hi - a.lo) : 0.5;
}

std::string Num(double v) { return fmt::format("{:.1f}", v); }

std::string TitleElement(const std::string& title) {
  return title.empty() ? "" : "<title>" + XmlEscape(title) + "</title>";
}

}  // namespace

double SvgPlot::Clamp(double px, double lo, double hi) const {
  return std::min(std::max(px, lo), hi);
}

double SvgPlot::X(double v) const { return left_ + Fraction(x_, v) * (right_ - left_); }
double SvgPlot::Y(double v) const { return bottom_ - Fraction(y_, v) * (bottom_ - top_); }

namespace {

// The axis's own format, else ShortDouble, else (when that gives two
// neighbouring ticks the same label, on a narrow zoom) as many decimals as
// the ticks' step needs.
std::function<std::string(double)> TickFormat(const PlotAxis& axis,
                                              const std::vector<double>& ticks) {
  if (axis.format) return axis.format;
  for (size_t i = 0; i + 1 < ticks.size(); ++i) {
    if (ShortDouble(ticks[i]) != ShortDouble(ticks[i + 1])) continue;
    const double step = std::abs(ticks[i + 1] - ticks[i]);
    const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 15);
    return [decimals](double v) { return fmt::format("{:.{}f}", v, decimals); };
  }
  return [](double v) { return ShortDouble(v); };
}

}  // namespace

void SvgPlot::DrawAxes() {
  std::vector<double> xt = !x_.ticks.empty() ? x_.ticks
                           : x_.log          ? LogTicks(x_.lo, x_.hi)
                                             : LinearTicks(x_.lo, x_.hi, 8);
  std::vector<double> yt = !y_.ticks.empty() ? y_.ticks
                           : y_.log          ? LogTicks(y_.lo, y_.hi)
                                             : LinearTicks(y_.lo, y_.hi, 6);
  auto fx = TickFormat(x_, xt);
  auto fy = TickFormat(y_, yt);
  for (double v : xt) {
    double px = X(v);
    if (px < left_ - 0.5 || px > right_ + 0.5) continue;
    body_ += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>",
                         Num(px), Num(top_), Num(bottom_));
    body_ += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                         Num(px), Num(bottom_ + 16), XmlEscape(fx(v)));
  }
  for (double v : yt) {
    double py = Y(v);
    if (py < top_ - 0.5 || py > bottom_ + 0.5) continue;
    body_ += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>",
                         Num(left_), Num(py), Num(right_));
    body_ += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                         Num(left_ - 6), Num(py + 4), XmlEscape(fy(v)));
  }
  body_ += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                       Num(left_), Num(top_), Num(right_ - left_), Num(bottom_ - top_));
  body_ +=
      fmt::format("<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                  Num((left_ + right_) / 2), Num(height_ - 8), XmlEscape(x_.label));
  body_ += fmt::format(
      "<text class=\"axis-label\" transform=\"translate({},{}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>",
      Num(16), Num((top_ + bottom_) / 2), XmlEscape(y_.label));
}

void SvgPlot::VBand(double x0, double x1, const std::string& css_class, const std::string& title,
                    double min_px) {
  double a = Clamp(X(x0), left_, right_), b = Clamp(X(x1), left_, right_);
  if (b - a < min_px) {
    double mid = (a + b) / 2;
    a = Clamp(mid - min_px / 2, left_, right_);
    b = Clamp(mid + min_px / 2, left_, right_);
  }
  body_ += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\">{}</rect>",
                       css_class, Num(a), Num(top_), Num(std::max(0.0, b - a)), Num(bottom_ - top_),
                       TitleElement(title));
}

void SvgPlot::HLine(double y, const std::string& css_class, const std::string& label) {
  double py = Y(y);
  if (py < top_ - 0.5 || py > bottom_ + 0.5) return;
  body_ += fmt::format("<line class=\"{0}\" x1=\"{1}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>",
                       css_class, Num(left_), Num(py), Num(right_));
  if (!label.empty())
    body_ += fmt::format("<text class=\"{}-label\" x=\"{}\" y=\"{}\">{}</text>", css_class,
                         Num(left_ + 6), Num(py - 5), XmlEscape(label));
}

void SvgPlot::VLine(double x, const std::string& css_class, const std::string& label) {
  double px = X(x);
  if (px < left_ - 0.5 || px > right_ + 0.5) return;
  body_ += fmt::format("<line class=\"{3}\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", Num(px),
                       Num(top_), Num(bottom_), css_class);
  if (!label.empty())
    body_ += fmt::format("<text class=\"{}-label\" x=\"{}\" y=\"{}\">{}</text>", css_class,
                         Num(px + 4), Num(top_ + 12), XmlEscape(label));
}

void SvgPlot::Line(const std::vector<std::pair<double, double>>& points,
                   const std::string& css_class) {
  if (points.empty()) return;
  std::string d;
  for (size_t i = 0; i < points.size(); ++i)
    d += fmt::format("{}{},{}", i ? " L" : "M", Num(Clamp(X(points[i].first), left_, right_)),
                     Num(Clamp(Y(points[i].second), top_, bottom_)));
  body_ += fmt::format("<path class=\"{}\" d=\"{}\"/>", css_class, d);
}

void SvgPlot::Circle(double x, double y, double r, const std::string& css_class,
                     const std::string& title) {
  body_ += fmt::format("<circle class=\"{}\" cx=\"{}\" cy=\"{}\" r=\"{}\">{}</circle>", css_class,
                       Num(Clamp(X(x), left_, right_)), Num(Clamp(Y(y), top_, bottom_)), Num(r),
                       TitleElement(title));
}

void SvgPlot::Cross(double x, double y, double r, const std::string& css_class,
                    const std::string& title) {
  double px = Clamp(X(x), left_, right_), py = Clamp(Y(y), top_, bottom_);
  body_ += fmt::format("<path class=\"{}\" d=\"M{},{} L{},{} M{},{} L{},{}\">{}</path>", css_class,
                       Num(px - r), Num(py - r), Num(px + r), Num(py + r), Num(px - r), Num(py + r),
                       Num(px + r), Num(py - r), TitleElement(title));
}

void SvgPlot::Triangle(double x, double y, double r, const std::string& css_class,
                       const std::string& title) {
  double px = Clamp(X(x), left_, right_), py = Clamp(Y(y), top_, bottom_);
  body_ += fmt::format("<path class=\"{}\" d=\"M{},{} L{},{} L{},{} Z\">{}</path>", css_class,
                       Num(px), Num(py + r), Num(px - r), Num(py - r), Num(px + r), Num(py - r),
                       TitleElement(title));
}

void SvgPlot::Marker(double x, double y, MarkerShape shape, double r, const std::string& css_class,
                     const std::string& title) {
  PixelMarker(Clamp(X(x), left_, right_), Clamp(Y(y), top_, bottom_), shape, r, css_class, title);
}

void SvgPlot::PixelMarker(double px, double py, MarkerShape shape, double r,
                          const std::string& css_class, const std::string& title) {
  std::string d;
  switch (shape) {
    case MarkerShape::kCircle:
      body_ += fmt::format("<circle class=\"{}\" cx=\"{}\" cy=\"{}\" r=\"{}\">{}</circle>", css_class,
                           Num(px), Num(py), Num(r), TitleElement(title));
      return;
    case MarkerShape::kSquare:
      r *= 0.9;
      d = fmt::format("M{},{} H{} V{} H{} Z", Num(px - r), Num(py - r), Num(px + r), Num(py + r),
                      Num(px - r));
      break;
    case MarkerShape::kDiamond:
      r *= 1.25;
      d = fmt::format("M{},{} L{},{} L{},{} L{},{} Z", Num(px), Num(py - r), Num(px + r), Num(py),
                      Num(px), Num(py + r), Num(px - r), Num(py));
      break;
    case MarkerShape::kTriangleUp:
      r *= 1.2;
      d = fmt::format("M{},{} L{},{} L{},{} Z", Num(px), Num(py - r), Num(px + r), Num(py + r * 0.8),
                      Num(px - r), Num(py + r * 0.8));
      break;
    case MarkerShape::kTriangleDown:
      r *= 1.2;
      d = fmt::format("M{},{} L{},{} L{},{} Z", Num(px), Num(py + r), Num(px + r), Num(py - r * 0.8),
                      Num(px - r), Num(py - r * 0.8));
      break;
    case MarkerShape::kCross:
      d = fmt::format("M{},{} L{},{} M{},{} L{},{}", Num(px - r), Num(py - r), Num(px + r),
                      Num(py + r), Num(px - r), Num(py + r), Num(px + r), Num(py - r));
      break;
    case MarkerShape::kPlus:
      r *= 1.2;
      d = fmt::format("M{},{} H{} M{},{} V{}", Num(px - r), Num(py), Num(px + r), Num(px),
                      Num(py - r), Num(py + r));
      break;
  }
  body_ += fmt::format("<path class=\"{}\" d=\"{}\">{}</path>", css_class, d, TitleElement(title));
}

void SvgPlot::PixelPath(const std::string& d, const std::string& css_class,
                        const std::string& title) {
  if (d.empty()) return;
  body_ += fmt::format("<path class=\"{}\" d=\"{}\">{}</path>", css_class, d, TitleElement(title));
}

void SvgPlot::AddLegend(LegendItem item) {
  for (const LegendItem& l : legend_)
    if (l.label == item.label) return;
  if (legend_.size() < kMaxLegend) legend_.push_back(std::move(item));
}

void SvgPlot::Label(double x, double y, const std::string& text, const std::string& css_class,
                    double dx, double dy, std::string_view anchor) {
  PixelText(Clamp(X(x), left_, right_) + dx, Clamp(Y(y), top_, bottom_) + dy, text, css_class,
            anchor);
}

void SvgPlot::PixelRect(double x, double y, double w, double h, const std::string& css_class,
                        const std::string& title) {
  body_ += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\">{}</rect>",
                       css_class, Num(x), Num(y), Num(std::max(0.0, w)), Num(std::max(0.0, h)),
                       TitleElement(title));
}

void SvgPlot::PixelText(double x, double y, const std::string& text, const std::string& css_class,
                        std::string_view anchor) {
  body_ += fmt::format("<text class=\"{}\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>",
                       css_class, Num(x), Num(y), anchor, XmlEscape(text));
}

void SvgPlot::EnableReadout(std::string x_unit, std::string y_unit, double bytes_per_ratio) {
  readout_ = fmt::format(
      " data-map=\"{} {} {:.17g} {:.17g} {} {} {} {:.17g} {:.17g} {}\" data-units=\"{} {}\" data-base=\"{:.17g}\"",
      Num(left_), Num(right_), x_.lo, x_.hi, x_.log ? 1 : 0, Num(top_), Num(bottom_), y_.lo, y_.hi,
      y_.log ? 1 : 0, x_unit, y_unit, bytes_per_ratio);
}

bool SvgPlot::FreeLabel(double px, double py, const std::string& text, const std::string& css_class,
                        std::string_view anchor, const std::vector<double>& dy_choices,
                        double font_px) {
  const double w = 7.0 * static_cast<double>(text.size()) * font_px / 12.5;  // as the legend's TextWidth
  const double x0 = anchor == "end" ? px - w : anchor == "middle" ? px - w / 2 : px;
  for (double dy : dy_choices) {
    Box b{x0 - 2, py + dy - font_px, x0 + w + 2, py + dy + 3};
    if (b.x0 < 0 || b.x1 > width_ || b.y0 < 0 || b.y1 > height_) continue;
    bool free = true;
    for (const Box& o : labels_) free &= b.x1 <= o.x0 || o.x1 <= b.x0 || b.y1 <= o.y0 || o.y1 <= b.y0;
    if (!free) continue;
    labels_.push_back(b);
    PixelText(px, py + dy, text, css_class, anchor);
    return true;
  }
  return false;
}

void SvgPlot::PixelLine(double x0, double y0, double x1, double y1, const std::string& css_class) {
  body_ += fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", css_class,
                       Num(x0), Num(y0), Num(x1), Num(y1));
}

namespace {

// About the width of `text` at the legend's 12.5 px: no font metrics here,
// so an average glyph width that errs wide.
double TextWidth(const std::string& text) { return 7.0 * static_cast<double>(text.size()); }

}  // namespace

std::string SvgPlot::Finish(const std::string& title, std::string_view style) const {
  // The legend: rows of swatch + text under the plot, wrapped to the width.
  std::string legend;
  int height = height_;
  if (!legend_.empty()) {
    const double x0 = 14, gap = 22, swatch = 26, row_h = 20;
    double x = x0, y = height_ + 6;
    // A label too long for one line is wrapped at spaces onto lines of its own.
    const double max_text = width_ - 10 - x0 - swatch - 6;
    double next_y = y;  // below the tallest item of the current row
    for (const LegendItem& item : legend_) {
      std::vector<std::string> lines;
      for (size_t start = 0; start < item.label.size();) {
        size_t fit = static_cast<size_t>(std::max(8.0, max_text / TextWidth("x")));
        size_t end = item.label.size();
        if (end - start > fit) {
          size_t space = item.label.rfind(' ', start + fit);
          end = space != std::string::npos && space > start ? space : start + fit;
        }
        lines.push_back(item.label.substr(start, end - start));
        start = end < item.label.size() && item.label[end] == ' ' ? end + 1 : end;
      }
      if (lines.empty()) lines.push_back("");
      double text_w = 0;
      for (const std::string& l : lines) text_w = std::max(text_w, TextWidth(l));
      double w = swatch + 6 + text_w;
      if (x > x0 && (x + w > width_ - 10 || lines.size() > 1)) {
        x = x0;
        y = next_y + row_h;
      }
      next_y = std::max(next_y, y + row_h * static_cast<double>(lines.size() - 1));
      const double cy = y + row_h / 2;
      switch (item.swatch) {
        case LegendItem::Swatch::kLine:
          legend += fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                                item.css_class, Num(x), Num(cy), Num(x + swatch), Num(cy));
          break;
        case LegendItem::Swatch::kBand:
          legend += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\"/>",
                                item.css_class, Num(x), Num(cy - 6), Num(swatch));
          break;
        case LegendItem::Swatch::kTick:
          legend += fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                                item.css_class, Num(x + swatch / 2), Num(cy - 7),
                                Num(x + swatch / 2), Num(cy + 7));
          break;
        case LegendItem::Swatch::kMarker: {
          // Drawn through the marker code into a scratch plot body.
          SvgPlot scratch(0, 0);
          scratch.PixelMarker(x + swatch / 2, cy, item.shape, 4.5, item.css_class, "");
          legend += scratch.body_;
          break;
        }
      }
      for (size_t k = 0; k < lines.size(); ++k)
        legend += fmt::format("<text class=\"legend-text\" x=\"{}\" y=\"{}\">{}</text>",
                              Num(x + swatch + 6), Num(cy + 4.5 + row_h * static_cast<double>(k)),
                              XmlEscape(lines[k]));
      if (lines.size() > 1) {
        x = x0;
        y = next_y + row_h;
        next_y = y;
      } else {
        x += w + gap;
      }
    }
    height = static_cast<int>(std::max(y, next_y) + row_h + 6);
  }
  std::string head = style.empty() ? std::string()
                                   : fmt::format("<style><![CDATA[{}]]></style><rect class=\"paper\" x=\"0\" "
                                                 "y=\"0\" width=\"{}\" height=\"{}\"/>",
                                                 style, width_, height);
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 {0} {1}\" "
      "width=\"{0}\" "
      "height=\"{1}\" role=\"img\" aria-label=\"{2}\"{6}><title>{2}</title>{3}{4}{5}</svg>",
      width_, height, XmlEscape(title), head, body_, legend, style.empty() ? readout_ : std::string());
}

}  // namespace dtr
