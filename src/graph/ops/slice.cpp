// slice: output[i] = input[start + i*stride] per dim, i < size.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::slice(Tensor input, const SliceAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const SliceAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "input"));
  const Dims& x = ctx.in(0).shape;
  const std::vector<int64_t>& start = a.start;
  const std::vector<int64_t>& size = a.size;
  if (start.size() != x.rank() || size.size() != x.rank() || !fits_dims(a.stride, x.rank()))
    return ctx.error("start {}, size {} and stride {} must each have {} entries (the rank of {})", join_ints(start),
                     join_ints(size), join_ints(a.stride), x.rank(), ctx.describe(0));
  const std::vector<int64_t> stride = a.strides(x.rank());
  for (size_t i = 0; i < x.rank(); ++i) {
    if (size[i] < 0) return ctx.error("size {} must be >= 0", join_ints(size));
    if (stride[i] == 0) return ctx.error("stride {} must be non-zero", join_ints(stride));
    if (size[i] == 0 || x[i] < 0) continue;
    const int64_t last = start[i] + (size[i] - 1) * stride[i];
    if (start[i] < 0 || start[i] >= x[i] || last < 0 || last >= x[i])
      return ctx.error("dim {}: start {} with size {} and stride {} reads outside [0, {}) of {}", i, start[i], size[i],
                       stride[i], x[i], ctx.describe(0));
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(size)}};
}
}  // namespace

extern const OpDef kSliceOp = define_op<SliceAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
