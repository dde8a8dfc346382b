#include "workflow/svg_plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "workflow/report.h"

namespace tensoracle::workflow {

namespace {

constexpr double kWidth = 640, kHeight = 220, kLeft = 56, kRight = 16, kTop = 14, kBottom = 40;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

std::string open_svg(double height = kHeight) {
  return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="{:g}" height="{:g}" viewBox="0 0 {:g} {:g}">)",
                     kWidth, height, kWidth, height);
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", const char* cls = "label") {
  return fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="{}" class="{}">{}</text>)", x, y, anchor, cls, html_escape(s));
}

std::string axes() {
  return fmt::format(R"(<line x1="{0:g}" y1="{1:g}" x2="{2:g}" y2="{1:g}" class="axis"/><line x1="{0:g}" y1="{3:g}" x2="{0:g}" y2="{1:g}" class="axis"/>)",
                     kLeft, kTop + kPlotH, kLeft + kPlotW, kTop);
}

double nice_max(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (v <= m * p) return m * p;
  return 10 * p;
}

}  // namespace

std::string error_histogram_svg(const std::vector<double>& counts, int low_exponent, int bins_per_decade,
                                const std::vector<LimitLine>& limits, double zero_count, double non_finite_count) {
  std::string s = open_svg();
  s += axes();
  // The axis spans the data's decades and every limit's.
  double lo = low_exponent, hi = low_exponent + static_cast<double>(counts.size()) / bins_per_decade;
  for (const LimitLine& l : limits)
    if (l.value > 0) lo = std::min(lo, std::floor(std::log10(l.value))), hi = std::max(hi, std::floor(std::log10(l.value)) + 1);
  if (hi <= lo) hi = lo + 1;
  const auto x_of = [&](double exponent) { return kLeft + (exponent - lo) / (hi - lo) * kPlotW; };
  const double top = nice_max(counts.empty() ? 1 : *std::max_element(counts.begin(), counts.end()));
  for (size_t i = 0; i < counts.size(); ++i) {
    const double e0 = low_exponent + static_cast<double>(i) / bins_per_decade, e1 = e0 + 1.0 / bins_per_decade;
    const double h = counts[i] / top * kPlotH;
    if (counts[i] > 0)
      s += fmt::format(R"(<rect class="bar" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"><title>{}</title></rect>)",
                       x_of(e0), kTop + kPlotH - h, std::max(1.0, x_of(e1) - x_of(e0) - 1), h,
                       html_escape(fmt::format("{:g} elements with |c-r| in [{:.2e}, {:.2e})", counts[i], std::pow(10, e0),
                                               std::pow(10, e1))));
  }
  for (int e = static_cast<int>(lo); e <= static_cast<int>(hi); ++e) {
    s += fmt::format(R"(<line x1="{0:.1f}" y1="{1:g}" x2="{0:.1f}" y2="{2:g}" class="tick"/>)", x_of(e), kTop + kPlotH, kTop + kPlotH + 4);
    s += text(x_of(e), kTop + kPlotH + 16, fmt::format("1e{}", e));
  }
  s += text(kLeft + kPlotW / 2, kHeight - 6, "|candidate - reference| (log axis)");
  s += text(kLeft - 6, kTop + 10, fmt::format("{:g}", top), "end");
  s += text(kLeft - 6, kTop + kPlotH, "0", "end");
  for (const LimitLine& l : limits) {
    if (!(l.value > 0)) continue;
    const double x = x_of(std::log10(l.value));
    s += fmt::format(R"(<line x1="{0:.1f}" y1="{1:g}" x2="{0:.1f}" y2="{2:g}" class="limit"/>)", x, kTop, kTop + kPlotH);
    // The label sits on the side of the line with room for it.
    const bool left = x > kLeft + kPlotW * 0.6;
    s += text(left ? x - 3 : x + 3, kTop + 24, fmt::format("{} {:.3g}", l.name, l.value), left ? "end" : "start", "limit-label");
  }
  s += text(kLeft + kPlotW, kTop + 10, fmt::format("exact: {:g}, non-finite: {:g}", zero_count, non_finite_count), "end");
  return s + "</svg>";
}

std::string latency_svg(const std::vector<double>& baseline_ms, const std::vector<double>& candidate_ms,
                        const std::string& baseline_label, const std::string& candidate_label) {
  std::string s = open_svg();
  s += axes();
  std::vector<double> all = baseline_ms;
  all.insert(all.end(), candidate_ms.begin(), candidate_ms.end());
  if (all.empty()) return s + "</svg>";
  std::sort(all.begin(), all.end());
  // The axis ends at the 99th percentile of both: a few outliers must not squeeze the shapes.
  const double lo = all.front(), hi = std::max(lo * 1.0001 + 1e-9, all[static_cast<size_t>(0.99 * (all.size() - 1))]);
  constexpr int kBins = 40;
  const auto histogram = [&](const std::vector<double>& v) {
    std::vector<double> c(kBins, 0);
    for (double x : v) c[static_cast<size_t>(std::clamp(static_cast<int>((x - lo) / (hi - lo) * kBins), 0, kBins - 1))] += 1;
    return c;
  };
  const std::vector<double> hb = histogram(baseline_ms), hc = histogram(candidate_ms);
  const double top = nice_max(std::max(*std::max_element(hb.begin(), hb.end()), *std::max_element(hc.begin(), hc.end())));
  const auto x_of = [&](double v) { return kLeft + (v - lo) / (hi - lo) * kPlotW; };
  const auto path = [&](const std::vector<double>& c, const char* cls) {
    std::string d = fmt::format("M{:.1f},{:.1f}", kLeft, kTop + kPlotH);
    for (int i = 0; i < kBins; ++i) {
      const double y = kTop + kPlotH - c[i] / top * kPlotH;
      d += fmt::format(" L{:.1f},{:.1f} L{:.1f},{:.1f}", kLeft + i * kPlotW / kBins, y, kLeft + (i + 1) * kPlotW / kBins, y);
    }
    d += fmt::format(" L{:.1f},{:.1f}", kLeft + kPlotW, kTop + kPlotH);
    return fmt::format(R"(<path class="{}" d="{}"/>)", cls, d);
  };
  s += path(hb, "series-a") + path(hc, "series-b");
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
  };
  const double mb = median(baseline_ms), mc = median(candidate_ms);
  s += fmt::format(R"(<line x1="{0:.1f}" y1="{1:g}" x2="{0:.1f}" y2="{2:g}" class="median-a"/>)", x_of(mb), kTop, kTop + kPlotH);
  s += fmt::format(R"(<line x1="{0:.1f}" y1="{1:g}" x2="{0:.1f}" y2="{2:g}" class="median-b"/>)", x_of(mc), kTop, kTop + kPlotH);
  for (int i = 0; i <= 4; ++i) s += text(kLeft + i * kPlotW / 4, kTop + kPlotH + 16, fmt::format("{:.4g}", lo + i * (hi - lo) / 4));
  s += text(kLeft + kPlotW / 2, kHeight - 6, "ms per call (axis to the 99th percentile)");
  s += text(kLeft - 6, kTop + 10, fmt::format("{:g}", top), "end");
  s += text(kLeft + kPlotW, kTop + 10, fmt::format("{}: median {:.4g} ms", baseline_label, mb), "end", "legend-a");
  s += text(kLeft + kPlotW, kTop + 24, fmt::format("{}: median {:.4g} ms", candidate_label, mc), "end", "legend-b");
  return s + "</svg>";
}

std::string bars_svg(std::vector<BarItem> items, const std::string& unit, size_t top) {
  std::sort(items.begin(), items.end(), [](const BarItem& a, const BarItem& b) { return a.value > b.value; });
  if (items.size() > top) items.resize(top);
  const double row = 16, height = kTop + row * static_cast<double>(items.size()) + 24;
  std::string s = open_svg(height);
  const double max = items.empty() ? 1 : std::max(items.front().value, 1e-12);
  const double left = 260, width = kWidth - left - 90;
  for (size_t i = 0; i < items.size(); ++i) {
    const double y = kTop + row * static_cast<double>(i);
    std::string label = items[i].label.size() > 40 ? items[i].label.substr(0, 39) + "…" : items[i].label;
    s += text(left - 6, y + 11, label, "end");
    s += fmt::format(R"(<rect class="bar" x="{:g}" y="{:.1f}" width="{:.1f}" height="{:g}"><title>{}</title></rect>)", left,
                     y + 2, std::max(1.0, items[i].value / max * width), row - 4, html_escape(items[i].label));
    s += text(left + items[i].value / max * width + 4, y + 11, fmt::format("{:.4g} {}", items[i].value, unit), "start");
  }
  return s + "</svg>";
}

}  // namespace tensoracle::workflow
