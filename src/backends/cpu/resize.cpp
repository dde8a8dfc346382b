// resize: nearest / linear, separable per spatial dim (docs/ops.md "Resize").
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

namespace {
// For one output coordinate: the two input indices and the weight of the second.
struct Tap {
  int64_t i0 = 0, i1 = 0;
  double w1 = 0;
};

std::vector<Tap> taps(int64_t in, int64_t out, double scale_used, ResizeMode mode, ResizeCoordinates coords) {
  std::vector<Tap> t(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    double src;
    switch (coords) {
      case ResizeCoordinates::kAsymmetric: src = static_cast<double>(o) * scale_used; break;
      case ResizeCoordinates::kHalfPixel: src = (static_cast<double>(o) + 0.5) * scale_used - 0.5; break;
      case ResizeCoordinates::kAlignCorners:
      default: src = out > 1 ? static_cast<double>(o) * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0; break;
    }
    Tap& tap = t[o];
    if (mode == ResizeMode::kNearest) {
      // asymmetric: floor(o * scale) (PyTorch "nearest"); half-pixel: floor((o + 0.5) * scale)
      // (PyTorch "nearest-exact"), both in fp32 arithmetic as PyTorch computes them;
      // align-corners: round half up.
      const float fscale = static_cast<float>(scale_used);
      double pick;
      if (coords == ResizeCoordinates::kAsymmetric) pick = std::floor(static_cast<float>(o) * fscale);
      else if (coords == ResizeCoordinates::kHalfPixel) pick = std::floor((static_cast<float>(o) + 0.5f) * fscale);
      else pick = std::floor(src + 0.5);
      tap.i0 = tap.i1 = std::min(in - 1, std::max<int64_t>(0, static_cast<int64_t>(pick)));
    } else {
      src = std::max(0.0, src);  // PyTorch clamps negative source coordinates
      const int64_t i0 = std::min(in - 1, static_cast<int64_t>(std::floor(src)));
      tap.i0 = i0;
      tap.i1 = std::min(in - 1, i0 + 1);
      tap.w1 = tap.i1 == i0 ? 0.0 : src - static_cast<double>(i0);
    }
  }
  return t;
}
}  // namespace

Status resize_kernel(const KernelContext& k) {
  const Dims& x = k.in_shape(0);
  const Dims& y = k.out_shape(0);
  TO_ASSIGN_OR_RETURN(const ResizeAttributes* attrs, k.attributes<ResizeAttributes>());
  const ResizeMode mode = attrs->mode;
  const ResizeCoordinates coords = attrs->coordinates;
  const std::vector<double>& scales = attrs->scales;
  const size_t n = attrs->spatial_rank();
  // Padded to 3 spatial dims.
  std::vector<std::vector<Tap>> t(3);
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  for (size_t i = 0; i < 3; ++i) {
    if (i < 3 - n) {
      t[i] = {Tap{}};
      continue;
    }
    const size_t dim = x.rank() - 3 + i;
    in[i] = x[dim];
    out[i] = y[dim];
    const double scale_used = scales.empty() ? static_cast<double>(in[i]) / static_cast<double>(out[i])
                                             : 1.0 / scales[i - (3 - n)];
    t[i] = taps(in[i], out[i], scale_used, mode, coords);
  }
  const int64_t in_size = in[0] * in[1] * in[2], out_size = out[0] * out[1] * out[2];
  const int64_t planes = out_size ? count_of(y) / out_size : 0;
  const double* src = k.in(0);
  double* dst = k.out(0);
  parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const double* plane = src + p * in_size;
      for (int64_t a = 0; a < out[0]; ++a)
        for (int64_t b = 0; b < out[1]; ++b)
          for (int64_t c = 0; c < out[2]; ++c) {
            const Tap &ta = t[0][a], &tb = t[1][b], &tc = t[2][c];
            double acc = 0;
            for (int corner = 0; corner < 8; ++corner) {
              const double wa = corner & 4 ? ta.w1 : 1 - ta.w1, wb = corner & 2 ? tb.w1 : 1 - tb.w1,
                           wc = corner & 1 ? tc.w1 : 1 - tc.w1;
              const double w = wa * wb * wc;
              if (w == 0) continue;
              const int64_t ia = corner & 4 ? ta.i1 : ta.i0, ib = corner & 2 ? tb.i1 : tb.i0, ic = corner & 1 ? tc.i1 : tc.i0;
              acc += w * plane[(ia * in[1] + ib) * in[2] + ic];
            }
            dst[p * out_size + (a * out[1] + b) * out[2] + c] = acc;
          }
    }
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
