// top_k: the k largest (or smallest) values along an axis and their int64 indices.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

TopKOutputs Network::top_k(Tensor input, const TopKAttributes& attrs) {
  auto outs = impl_->layer({input}, {}, attrs);
  if (outs.size() != 2) return {};
  return {outs[0], outs[1]};
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const TopKAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_type(0, {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                                          DataType::kInt32, DataType::kInt64},
                                      "input"));
  const Dims& x = ctx.in(0).shape;
  const int64_t axis_attr = a.axis;
  auto axis = normalize_axis(axis_attr, x.rank());
  if (!axis) return ctx.error("axis {} is out of range for {}", axis_attr, ctx.describe(0));
  const int64_t k = a.k;
  if (k < 1 || (x[*axis] >= 0 && k > x[*axis]))
    return ctx.error("k {} must be in [1, {}] (dim {} of {})", k, x[*axis], *axis, ctx.describe(0));
  Dims out = x;
  out[*axis] = k;
  return std::vector<TensorDesc>{{ctx.in(0).dtype, out}, {DataType::kInt64, out}};
}
}  // namespace

extern const OpDef kTopKOp = define_op<TopKAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
