// softmax: exp(x - max) / sum, per line along the axis.
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

Status softmax_kernel(const KernelContext& k) {
  const Dims& shape = k.in_shape(0);
  TO_ASSIGN_OR_RETURN(const SoftmaxAttributes* a, k.attributes<SoftmaxAttributes>());
  TO_ASSIGN_OR_RETURN(const int64_t axis, k.axis(a->axis, shape.rank()));
  const AxisSplit s = split_at(shape, axis);
  const double* x = k.in(0);
  double* y = k.out(0);
  parallel_for(s.outer * s.inner, 256, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t base = (line / s.inner) * s.size * s.inner + line % s.inner;
      double max = -INFINITY;
      for (int64_t i = 0; i < s.size; ++i) max = std::max(max, x[base + i * s.inner]);
      double sum = 0;
      for (int64_t i = 0; i < s.size; ++i) sum += (y[base + i * s.inner] = std::exp(x[base + i * s.inner] - max));
      for (int64_t i = 0; i < s.size; ++i) y[base + i * s.inner] /= sum;
    }
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
