// grid_sample: samples [N, C, H, W] at normalized [-1, 1] coordinates of an [N, Ho, Wo, 2] grid.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::grid_sample(Tensor input, Tensor grid, const GridSampleAttributes& attrs) {
  return Impl::single(impl_->layer({input, grid}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const GridSampleAttributes&) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(0, 4, 4, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(1, 4, 4, "grid"));
  TO_RETURN_IF_ERROR(ctx.require_same_type(0, 1));
  const Dims& x = ctx.in(0).shape;
  const Dims& g = ctx.in(1).shape;
  if (!dims_agree(x[0], g[0]) || !dims_agree(g[3], 2))
    return ctx.error("grid {} must be [N, H_out, W_out, 2] with N of {}", ctx.describe(1), ctx.describe(0));
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims{x[0] < 0 ? g[0] : x[0], x[1], g[1], g[2]}}};
}
}  // namespace

extern const OpDef kGridSampleOp = define_op<GridSampleAttributes, &infer>(2, 2);

}  // namespace graph
}  // namespace tensoracle
