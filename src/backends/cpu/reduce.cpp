// reduce: sum, mean, max, min, prod over a set of axes (fp64 accumulation).
#include <cmath>
#include <limits>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

Status reduce_kernel(const KernelContext& k) {
  const Dims& shape = k.in_shape(0);
  TO_ASSIGN_OR_RETURN(const ReduceAttributes* a, k.attributes<ReduceAttributes>());
  const ReduceOp op = a->op;
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, graph::reduced_axes(k.instance.node, *a, shape.rank()));
  std::vector<bool> reduced(shape.rank(), false);
  for (int64_t axis : axes) reduced[static_cast<size_t>(axis)] = true;
  const std::vector<int64_t> strides = strides_of(shape);
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  for (size_t i = 0; i < shape.rank(); ++i) {
    (reduced[i] ? red_dims : kept_dims).push_back(shape[i]);
    (reduced[i] ? red_strides : kept_strides).push_back(strides[i]);
  }
  const Dims kept(kept_dims), red(red_dims);
  const int64_t outputs = count_of(kept), count = count_of(red);
  const double* x = k.in(0);
  double* y = k.out(0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  parallel_for(outputs, 64, [&](int64_t begin, int64_t end) {
    BroadcastCursor out_cursor(kept, {kept_strides});
    out_cursor.seek(begin);
    for (int64_t o = begin; o < end; ++o, out_cursor.next()) {
      const double* base = x + out_cursor.offset(0);
      BroadcastCursor c(red, {red_strides});
      c.seek(0);
      double acc = op == ReduceOp::kProd ? 1.0 : op == ReduceOp::kMax ? -INFINITY : op == ReduceOp::kMin ? INFINITY : 0.0;
      for (int64_t i = 0; i < count; ++i, c.next()) {
        const double v = base[c.offset(0)];
        switch (op) {
          case ReduceOp::kSum:
          case ReduceOp::kMean: acc += v; break;
          case ReduceOp::kProd: acc *= v; break;
          case ReduceOp::kMax: acc = (std::isnan(v) || std::isnan(acc)) ? nan : std::max(acc, v); break;
          case ReduceOp::kMin: acc = (std::isnan(v) || std::isnan(acc)) ? nan : std::min(acc, v); break;
        }
      }
      y[o] = op == ReduceOp::kMean ? acc / static_cast<double>(count) : acc;
    }
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
