// Timing statistics (bench.h): the summary of one run's samples and the percentile rule.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/errors.h"
#include "tensoracle/bench.h"

namespace tensoracle {

double percentile_of_sorted(const std::vector<double>& sorted, double q) {
  // numpy.percentile(method="linear"): rank (n - 1) * q / 100, interpolated between neighbours.
  const double rank = (static_cast<double>(sorted.size()) - 1.0) * q / 100.0;
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

Result<TimingStats> summarize_samples(const std::vector<double>& samples_ms) {
  if (samples_ms.empty()) return invalid_argument("no timing samples to summarize");
  for (size_t i = 0; i < samples_ms.size(); ++i)
    if (!std::isfinite(samples_ms[i]) || samples_ms[i] < 0)
      return invalid_argument("timing sample {} is {} ms (samples must be finite and >= 0)", i, samples_ms[i]);
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  TimingStats s;
  s.count = static_cast<int64_t>(sorted.size());
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  s.median_ms = percentile_of_sorted(sorted, 50);
  s.p90_ms = percentile_of_sorted(sorted, 90);
  s.p99_ms = percentile_of_sorted(sorted, 99);
  const double n = static_cast<double>(sorted.size());
  s.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  double squares = 0;
  for (double v : sorted) squares += (v - s.mean_ms) * (v - s.mean_ms);
  s.stddev_ms = sorted.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  s.cv = s.mean_ms > 0 ? s.stddev_ms / s.mean_ms : 0.0;
  return s;
}

}  // namespace tensoracle
