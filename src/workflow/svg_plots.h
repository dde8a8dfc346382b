// The report's plots as inline SVG text: drawn by this code from numbers, every label escaped.
#pragma once

#include <string>
#include <vector>

namespace tensoracle::workflow {

struct LimitLine {
  std::string name;
  double value = 0;
};

// Counts of |c - r| in log-spaced bins (bins_per_decade a decade from 10^low_exponent), with
// vertical lines at the limits; exact zeros and non-finite positions are written beside it.
std::string error_histogram_svg(const std::vector<double>& counts, int low_exponent, int bins_per_decade,
                                const std::vector<LimitLine>& limits, double zero_count, double non_finite_count);

// Two latency distributions on one linear axis (step histograms, medians marked).
std::string latency_svg(const std::vector<double>& baseline_ms, const std::vector<double>& candidate_ms,
                        const std::string& baseline_label, const std::string& candidate_label);

// Horizontal bars: one per step, largest first (at most `top`).
struct BarItem {
  std::string label;
  double value = 0;
};
std::string bars_svg(std::vector<BarItem> items, const std::string& unit, size_t top);

}  // namespace tensoracle::workflow
