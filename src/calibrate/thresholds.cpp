#include "calibrate/thresholds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tensoracle/float_formats.h"

namespace tensoracle::calibration {

void AbsHistogram::add(const float* values, int64_t count) {
  const double n = static_cast<double>(bins.size());
  const size_t last = bins.size() - 1;
  for (int64_t i = 0; i < count; ++i) {
    const double v = std::fabs(static_cast<double>(values[i]));
    // amax is the largest |x| of the same data, so v <= amax; v == amax lands in the last bin.
    const double position = amax > 0 ? v / amax * n : 0;
    ++bins[std::min(last, static_cast<size_t>(position))];
  }
}

double format_max(DataType format) { return format == DataType::kFloat8E4M3 ? 448.0 : 127.0; }

// The quantize and dequantize kernels' arithmetic (src/backends/cpu/quantize.cpp): fp32 division
// and product, the format's rounding.
double quantize_dequantize(double v, double scale, DataType format) {
  const float s = static_cast<float>(scale);
  const float x = static_cast<float>(v) / s;
  float q;
  if (format == DataType::kFloat8E4M3) {
    q = fp8e4m3_to_float(float_to_fp8e4m3(x, Fp8Overflow::kSaturate));
  } else {
    q = std::min(127.0f, std::max(-128.0f, std::nearbyint(x)));
  }
  return static_cast<double>(q * s);
}

namespace {
uint64_t total_of(const std::vector<uint64_t>& bins) { return std::accumulate(bins.begin(), bins.end(), uint64_t{0}); }

// MXNet's and onnxruntime's smoothing: every empty bin gets eps, taken evenly from the others.
// False when the non-empty bins cannot give it (then KL is taken as infinite).
bool smooth(std::vector<double>& d) {
  constexpr double kEps = 1e-4;
  const auto zeros = static_cast<double>(std::count(d.begin(), d.end(), 0.0));
  const double nonzeros = static_cast<double>(d.size()) - zeros;
  if (nonzeros == 0) return false;
  const double taken = kEps * zeros / nonzeros;
  if (taken >= 1.0) return false;
  for (double& v : d) v = v == 0 ? kEps : v - taken;
  return true;
}

// KL(P || Q) of two (unnormalized) distributions of the same size.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  const double sp = std::accumulate(p.begin(), p.end(), 0.0), sq = std::accumulate(q.begin(), q.end(), 0.0);
  double kl = 0;
  for (size_t k = 0; k < p.size(); ++k) {
    const double pk = p[k] / sp, qk = q[k] / sq;
    if (pk > 0) kl += pk * std::log(pk / qk);
  }
  return kl;
}
}  // namespace

double percentile_threshold(const AbsHistogram& h, double percentile) {
  const double target = percentile / 100.0 * static_cast<double>(total_of(h.bins));
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bins.size(); ++i) {
    cumulative += h.bins[i];
    if (static_cast<double>(cumulative) >= target) return std::min(h.amax, static_cast<double>(i + 1) * h.bin_width());
  }
  return h.amax;
}

double entropy_threshold(const AbsHistogram& h, int64_t kl_bins) {
  const size_t groups = static_cast<size_t>(kl_bins);
  const size_t n = h.bins.size();
  if (n <= groups) return h.amax;
  double best_kl = std::numeric_limits<double>::infinity();
  size_t best = n;
  std::vector<double> p, q;
  for (size_t i = groups; i <= n; ++i) {
    // P: the histogram cut at bin i, what lies beyond folded into its last bin.
    p.assign(h.bins.begin(), h.bins.begin() + static_cast<std::ptrdiff_t>(i));
    for (size_t k = i; k < n; ++k) p[i - 1] += static_cast<double>(h.bins[k]);
    // Q: the cut histogram merged into `groups` groups (the last takes the remainder), each
    // group's count spread evenly over the group's bins where P is not empty.
    q.assign(i, 0.0);
    const size_t merged = i / groups;
    for (size_t g = 0; g < groups; ++g) {
      const size_t start = g * merged, end = g + 1 == groups ? i : start + merged;
      double count = 0;
      size_t nonzero = 0;
      for (size_t k = start; k < end; ++k) {
        count += static_cast<double>(h.bins[k]);
        nonzero += p[k] != 0 ? 1 : 0;
      }
      if (nonzero == 0) continue;
      for (size_t k = start; k < end; ++k)
        if (p[k] != 0) q[k] = count / static_cast<double>(nonzero);
    }
    if (!smooth(p) || !smooth(q)) continue;
    const double kl = kl_divergence(p, q);
    if (kl < best_kl) {
      best_kl = kl;
      best = i;
    }
  }
  return static_cast<double>(best) * h.bin_width();
}

double mse_threshold(const AbsHistogram& h, DataType format) {
  const double w = h.bin_width();
  const double qmax = format_max(format);
  double best_error = std::numeric_limits<double>::infinity();
  double best = h.amax;
  for (size_t i = 1; i <= h.bins.size(); ++i) {
    const double t = static_cast<double>(i) * w;
    double error = 0;
    for (size_t j = 0; j < h.bins.size(); ++j) {
      if (h.bins[j] == 0) continue;
      const double centre = (static_cast<double>(j) + 0.5) * w;
      const double d = centre - quantize_dequantize(centre, t / qmax, format);
      error += static_cast<double>(h.bins[j]) * d * d;
    }
    if (error < best_error) {
      best_error = error;
      best = t;
    }
  }
  return best;
}

}  // namespace tensoracle::calibration
