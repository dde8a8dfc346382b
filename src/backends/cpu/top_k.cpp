// top_k: a stable sort of each line; NaN counts as the largest value (as in PyTorch).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

Status top_k_kernel(const KernelContext& k) {
  const Dims& x = k.in_shape(0);
  TO_ASSIGN_OR_RETURN(const TopKAttributes* attrs, k.attributes<TopKAttributes>());
  TO_ASSIGN_OR_RETURN(const int64_t axis, k.axis(attrs->axis, x.rank()));
  const int64_t kk = attrs->k;
  const bool largest = attrs->largest;
  const AxisSplit s = split_at(x, axis);
  parallel_for(s.outer * s.inner, 16, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> order(static_cast<size_t>(s.size));
    for (int64_t line = begin; line < end; ++line) {
      const int64_t o = line / s.inner, i = line % s.inner;
      const double* in = k.in(0) + o * s.size * s.inner + i;
      std::iota(order.begin(), order.end(), 0);
      auto greater = [&](int64_t a, int64_t b) {
        const double va = in[a * s.inner], vb = in[b * s.inner];
        if (std::isnan(va) || std::isnan(vb)) return std::isnan(va) && !std::isnan(vb);
        return va > vb;
      };
      if (largest) std::stable_sort(order.begin(), order.end(), greater);
      else std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return greater(b, a); });
      for (int64_t j = 0; j < kk; ++j) {
        const int64_t at = (o * kk + j) * s.inner + i;
        k.out(0)[at] = in[order[j] * s.inner];
        k.out(1)[at] = static_cast<double>(order[j]);
      }
    }
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
