// layer, RMS, group, instance and batch norm. Statistics in fp64, two passes (mean, then the
// biased variance of the deviations).
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

namespace {

// Normalizes `groups` contiguous blocks of `size` elements: y = (x - mean) / sqrt(var + eps)
// (or x / sqrt(mean(x^2) + eps) when rms), then `affine(block, index in block, value)`.
template <typename Affine>
void normalize_blocks(const double* x, double* y, int64_t groups, int64_t size, double eps, bool rms, Affine affine) {
  parallel_for(groups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const double* in = x + g * size;
      double* out = y + g * size;
      double mean = 0;
      if (!rms) {
        for (int64_t i = 0; i < size; ++i) mean += in[i];
        mean /= static_cast<double>(size);
      }
      double var = 0;
      for (int64_t i = 0; i < size; ++i) var += (in[i] - mean) * (in[i] - mean);
      var /= static_cast<double>(size);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < size; ++i) out[i] = affine(g, i, (in[i] - mean) * inv);
    }
  });
}

// Layer norm (rms false) or RMS norm over the dims [axis, rank).
Status trailing_norm(const KernelContext& k, int64_t axis_attribute, double epsilon, bool rms) {
  const Dims& shape = k.in_shape(0);
  TO_ASSIGN_OR_RETURN(const int64_t axis, k.axis(axis_attribute, shape.rank()));
  int64_t size = 1;
  for (size_t i = axis; i < shape.rank(); ++i) size *= shape[i];
  const int64_t rows = size ? count_of(shape) / size : 0;
  const double* scale = k.has(1) ? k.in(1) : nullptr;
  const double* bias = !rms && k.has(2) ? k.in(2) : nullptr;
  normalize_blocks(k.in(0), k.out(0), rows, size, epsilon, rms,
                   [&](int64_t, int64_t i, double v) { return (scale ? v * scale[i] : v) + (bias ? bias[i] : 0.0); });
  return Status::ok();
}

// Group norm with `groups` groups (instance norm: groups = channels).
Status channel_group_norm(const KernelContext& k, int64_t groups, double epsilon) {
  const Dims& shape = k.in_shape(0);
  const int64_t n = shape[0], c = shape[1];
  const int64_t spatial = n * c != 0 ? count_of(shape) / (n * c) : 0;
  const int64_t per_group = (c / groups) * spatial;
  const double* scale = k.has(1) ? k.in(1) : nullptr;
  const double* bias = k.has(2) ? k.in(2) : nullptr;
  normalize_blocks(k.in(0), k.out(0), n * groups, per_group, epsilon, false,
                   [&](int64_t g, int64_t i, double v) {
                     const int64_t channel = (g % groups) * (c / groups) + i / spatial;
                     return (scale ? v * scale[channel] : v) + (bias ? bias[channel] : 0.0);
                   });
  return Status::ok();
}

}  // namespace

Status layer_norm_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const LayerNormAttributes* a, k.attributes<LayerNormAttributes>());
  return trailing_norm(k, a->axis, a->epsilon, false);
}
Status rms_norm_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const RmsNormAttributes* a, k.attributes<RmsNormAttributes>());
  return trailing_norm(k, a->axis, a->epsilon, true);
}
Status group_norm_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const GroupNormAttributes* a, k.attributes<GroupNormAttributes>());
  return channel_group_norm(k, a->groups, a->epsilon);
}
Status instance_norm_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const InstanceNormAttributes* a, k.attributes<InstanceNormAttributes>());
  return channel_group_norm(k, k.in_shape(0)[1], a->epsilon);
}

Status batch_norm_kernel(const KernelContext& k) {
  const Dims& shape = k.in_shape(0);
  const int64_t c = shape[1];
  const int64_t spatial = shape[0] * c != 0 ? count_of(shape) / (shape[0] * c) : 0;
  TO_ASSIGN_OR_RETURN(const BatchNormAttributes* a, k.attributes<BatchNormAttributes>());
  const double eps = a->epsilon;
  const double *x = k.in(0), *scale = k.in(1), *bias = k.in(2), *mean = k.in(3), *var = k.in(4);
  double* y = k.out(0);
  parallel_for(shape[0] * c, 4, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t ch = plane % c;
      const double inv = 1.0 / std::sqrt(var[ch] + eps);
      for (int64_t i = 0; i < spatial; ++i) {
        const int64_t at = plane * spatial + i;
        y[at] = (x[at] - mean[ch]) * inv * scale[ch] + bias[ch];
      }
    }
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
