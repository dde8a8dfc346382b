// gather: data.shape[:axis] + indices.shape + data.shape[axis+1:] (embeddings: axis 0).
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::gather(Tensor data, Tensor indices, const GatherAttributes& attrs) {
  return Impl::single(impl_->layer({data, indices}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const GatherAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "data"));
  TO_RETURN_IF_ERROR(ctx.require_type(1, {DataType::kInt32, DataType::kInt64}, "indices"));
  const Dims& d = ctx.in(0).shape;
  const int64_t axis_attr = a.axis;
  auto axis = normalize_axis(axis_attr, d.rank());
  if (!axis) return ctx.error("axis {} is out of range for {}", axis_attr, ctx.describe(0));
  std::vector<int64_t> out(d.values().begin(), d.values().begin() + *axis);
  for (int64_t v : ctx.in(1).shape) out.push_back(v);
  out.insert(out.end(), d.values().begin() + *axis + 1, d.values().end());
  if (out.size() > Dims::kMaxRank) return ctx.error("output rank {} exceeds {}", out.size(), Dims::kMaxRank);
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kGatherOp = define_op<GatherAttributes, &infer>(2, 2);

}  // namespace graph
}  // namespace tensoracle
