// reduce: sum, mean, max, min, prod over a set of axes, optionally keeping reduced dims as 1.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::reduce(Tensor input, const ReduceAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {

namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const ReduceAttributes& a) {
  const ReduceOp op = a.op;
  if (op == ReduceOp::kMean) {
    TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  } else {
    TO_RETURN_IF_ERROR(ctx.require_type(0, {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                                            DataType::kInt32, DataType::kInt64},
                                        "input"));
  }
  const Dims& in = ctx.in(0).shape;
  auto reduced_dims = reduce_axes(a.axes, in.rank());
  if (!reduced_dims.is_ok()) return ctx.error("{}: {}", ctx.describe(0), reduced_dims.status().message());
  const std::vector<int64_t>& axes = *reduced_dims;
  const bool keep = a.keep_dims;
  std::vector<int64_t> out;
  size_t next = 0;
  for (size_t i = 0; i < in.rank(); ++i) {
    const bool reduced = next < axes.size() && axes[next] == static_cast<int64_t>(i);
    if (reduced) {
      ++next;
      if ((op == ReduceOp::kMax || op == ReduceOp::kMin) && in[i] == 0)
        return ctx.error("{} over an empty dim {} of {} has no value", enum_name(op), i, ctx.describe(0));
      if (keep) out.push_back(1);
    } else {
      out.push_back(in[i]);
    }
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kReduceOp = define_op<ReduceAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
