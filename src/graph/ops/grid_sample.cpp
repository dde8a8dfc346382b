// grid_sample: samples [N, C, H, W] at normalized [-1, 1] coordinates of an [N, Ho, Wo, 2] grid.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::grid_sample(Tensor input, Tensor grid, const GridSampleAttributes& a) {
  AttributeMap map{{"mode", std::string(enum_name(a.mode))},
                   {"padding", std::string(enum_name(a.padding))},
                   {"align_corners", a.align_corners}};
  return Impl::single(impl_->layer(*this, OpKind::kGridSample, {input, grid}, {}, std::move(map), a.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  if (!parse_enum<GridSampleMode>(get_string(ctx.attrs, "mode")))
    return ctx.error("unknown mode '{}'", get_string(ctx.attrs, "mode"));
  if (!parse_enum<GridSamplePadding>(get_string(ctx.attrs, "padding")))
    return ctx.error("unknown padding '{}'", get_string(ctx.attrs, "padding"));
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

extern const OpDef kGridSampleOp{2, 2, &infer};

}  // namespace graph
}  // namespace tensoracle
