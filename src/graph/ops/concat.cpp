// concat: joins tensors of one type and rank along an axis.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::concat(const std::vector<Tensor>& inputs, const ConcatAttributes& attrs) {
  return Impl::single(impl_->layer(inputs, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const ConcatAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "first input"));
  const Dims& first = ctx.in(0).shape;
  const int64_t axis_attr = a.axis;
  auto axis = normalize_axis(axis_attr, first.rank());
  if (!axis) return ctx.error("axis {} is out of range for {}", axis_attr, ctx.describe(0));
  std::vector<int64_t> out = first.values();
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    TO_RETURN_IF_ERROR(ctx.require(i, "input"));
    TO_RETURN_IF_ERROR(ctx.require_same_type(0, i));
    const Dims& d = ctx.in(i).shape;
    if (d.rank() != first.rank()) return ctx.error("{} and {} differ in rank", ctx.describe(0), ctx.describe(i));
    for (size_t j = 0; j < d.rank(); ++j) {
      if (static_cast<int64_t>(j) == *axis) {
        out[j] = (out[j] < 0 || d[j] < 0) ? -1 : out[j] + d[j];
      } else if (!dims_agree(out[j], d[j])) {
        return ctx.error("{} and {} differ in dim {} (only the concat axis {} may differ)", ctx.describe(0),
                         ctx.describe(i), j, *axis);
      } else if (out[j] < 0) {
        out[j] = d[j];
      }
    }
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kConcatOp = define_op<ConcatAttributes, &infer>(1, -1);

}  // namespace graph
}  // namespace tensoracle
