// The threshold T of each calibration method, from the statistics of one tensor: pure functions
// of a histogram of |x| (calibrate.h gives each method's definition; docs/quantization.md the
// details a cross-check needs).
#pragma once

#include <cstdint>
#include <vector>

#include "tensoracle/calibrate.h"
#include "tensoracle/status.h"

namespace tensoracle::calibration {

// A histogram of |x| with bins.size() equal bins over [0, amax]: |x| falls in bin
// floor(|x| / amax * bins), the last bin also taking |x| = amax.
struct AbsHistogram {
  double amax = 0;
  std::vector<uint64_t> bins;

  double bin_width() const { return bins.empty() ? 0 : amax / static_cast<double>(bins.size()); }
  void add(const float* values, int64_t count);
};

// The largest value of the format (127 for int8, 448 for fp8e4m3).
double format_max(DataType format);

// fake-quantizes v (>= 0) with `scale` in `format`: the value Q then DQ give back.
double quantize_dequantize(double v, double scale, DataType format);

double percentile_threshold(const AbsHistogram& h, double percentile);
// kl_bins: the quantized distribution's size (128, TensorRT's).
double entropy_threshold(const AbsHistogram& h, int64_t kl_bins = 128);
double mse_threshold(const AbsHistogram& h, DataType format);

}  // namespace tensoracle::calibration
