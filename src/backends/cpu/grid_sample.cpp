// grid_sample: PyTorch's F.grid_sample for 4D inputs (bilinear / nearest; zeros / border).
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

Status grid_sample_kernel(const KernelContext& k) {
  const Dims& x = k.in_shape(0);
  const Dims& y = k.out_shape(0);
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3], ho = y[2], wo = y[3];
  const bool align = graph::get_bool(k.attrs(), "align_corners");
  const bool border = graph::get_enum(k.attrs(), "padding", GridSamplePadding::kZeros) == GridSamplePadding::kBorder;
  const bool nearest = graph::get_enum(k.attrs(), "mode", GridSampleMode::kBilinear) == GridSampleMode::kNearest;
  // Normalized [-1, 1] -> pixel coordinates; border padding clamps into the image.
  auto unnormalize = [&](double v, int64_t size) {
    double p = align ? (v + 1) / 2 * static_cast<double>(size - 1) : ((v + 1) * static_cast<double>(size) - 1) / 2;
    if (border) p = std::min(static_cast<double>(size - 1), std::max(0.0, p));
    return p;
  };
  parallel_for(n * ho, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / ho, oh = r % ho;
      for (int64_t ow = 0; ow < wo; ++ow) {
        const double* g = k.in(1) + ((b * ho + oh) * wo + ow) * 2;
        const double ix = unnormalize(g[0], w), iy = unnormalize(g[1], h);
        for (int64_t ch = 0; ch < c; ++ch) {
          const double* plane = k.in(0) + (b * c + ch) * h * w;
          auto at = [&](int64_t yy, int64_t xx) { return (yy >= 0 && yy < h && xx >= 0 && xx < w) ? plane[yy * w + xx] : 0.0; };
          double v;
          if (nearest) {
            v = at(static_cast<int64_t>(std::nearbyint(iy)), static_cast<int64_t>(std::nearbyint(ix)));
          } else {
            const double fx = std::floor(ix), fy = std::floor(iy);
            const int64_t x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
            const double ax = ix - fx, ay = iy - fy;
            v = at(y0, x0) * (1 - ax) * (1 - ay) + at(y0, x0 + 1) * ax * (1 - ay) + at(y0 + 1, x0) * (1 - ax) * ay +
                at(y0 + 1, x0 + 1) * ax * ay;
          }
          k.out(0)[((b * c + ch) * ho + oh) * wo + ow] = v;
        }
      }
    }
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
