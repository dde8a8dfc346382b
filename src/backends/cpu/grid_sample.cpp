// grid_sample: PyTorch's F.grid_sample for 4D inputs (bilinear / nearest; zeros / border).
#include <cmath>
#include <limits>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

Status grid_sample_kernel(const KernelContext& k) {
  const Dims& x = k.in_shape(0);
  const Dims& y = k.out_shape(0);
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3], ho = y[2], wo = y[3];
  TO_ASSIGN_OR_RETURN(const GridSampleAttributes* a, k.attributes<GridSampleAttributes>());
  const bool align = a->align_corners;
  const bool border = a->padding == GridSamplePadding::kBorder;
  const bool nearest = a->mode == GridSampleMode::kNearest;
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
          // Taps are looked up in fp64 so that far-away or non-finite coordinates read as padding.
          auto at = [&](double yy, double xx) {
            return (yy >= 0 && yy < static_cast<double>(h) && xx >= 0 && xx < static_cast<double>(w))
                       ? plane[static_cast<int64_t>(yy) * w + static_cast<int64_t>(xx)]
                       : 0.0;
          };
          double v;
          if (!std::isfinite(ix) || !std::isfinite(iy)) {
            v = std::numeric_limits<double>::quiet_NaN();
          } else if (nearest) {
            v = at(std::nearbyint(iy), std::nearbyint(ix));
          } else {
            const double x0 = std::floor(ix), y0 = std::floor(iy);
            const double ax = ix - x0, ay = iy - y0;
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
