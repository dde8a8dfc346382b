// iota: int64 [like.shape[axis]] holding 0, 1, ..., n-1; the input gives only its dim.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::iota(Tensor like, const IotaAttributes& attrs) { return Impl::single(impl_->layer({like}, {}, attrs)); }

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const IotaAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "like"));
  const Dims& d = ctx.in(0).shape;
  auto axis = normalize_axis(a.axis, d.rank());
  if (!axis) return ctx.error("axis {} is out of range for {}", a.axis, ctx.describe(0));
  return std::vector<TensorDesc>{{DataType::kInt64, Dims{d[static_cast<size_t>(*axis)]}}};
}
}  // namespace

extern const OpDef kIotaOp = define_op<IotaAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
