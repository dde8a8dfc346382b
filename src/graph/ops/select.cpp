// select (where): condition ? a : b, all three broadcast.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::select(Tensor condition, Tensor a, Tensor b, const SelectAttributes& attrs) {
  return Impl::single(impl_->layer({condition, a, b}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const SelectAttributes&) {
  TO_RETURN_IF_ERROR(ctx.require_type(0, {DataType::kBool}, "condition"));
  TO_RETURN_IF_ERROR(ctx.require(1, "a"));
  TO_RETURN_IF_ERROR(ctx.require(2, "b"));
  TO_RETURN_IF_ERROR(ctx.require_same_type(1, 2));
  auto ab = broadcast_shapes(ctx.in(1).shape, ctx.in(2).shape);
  std::optional<Dims> all = ab ? broadcast_shapes(ctx.in(0).shape, *ab) : std::nullopt;
  if (!all) return ctx.error("{}, {} and {} do not broadcast", ctx.describe(0), ctx.describe(1), ctx.describe(2));
  return std::vector<TensorDesc>{{ctx.in(1).dtype, *all}};
}
}  // namespace

extern const OpDef kSelectOp = define_op<SelectAttributes, &infer>(3, 3);

}  // namespace graph
}  // namespace tensoracle
