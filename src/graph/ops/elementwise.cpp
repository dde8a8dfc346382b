// elementwise: binary ops with numpy broadcasting; comparisons give bool.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::elementwise(Tensor a, Tensor b, const ElementwiseAttributes& attrs) {
  return Impl::single(impl_->layer({a, b}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const ElementwiseAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "a"));
  TO_RETURN_IF_ERROR(ctx.require(1, "b"));
  TO_RETURN_IF_ERROR(ctx.require_same_type(0, 1));
  const ElementwiseOp op = a.op;
  const std::string_view op_name = enum_name(op);
  const DataType type = ctx.in(0).dtype;
  const bool logical = elementwise_class(op) == ElementwiseClass::kLogical;
  const bool comparison = elementwise_class(op) == ElementwiseClass::kComparison;
  if (logical && type != DataType::kBool) return ctx.error("'{}' needs bool operands; {} is not", op_name, ctx.describe(0));
  if (!logical && type == DataType::kBool && op != ElementwiseOp::kEqual)
    return ctx.error("'{}' does not accept bool operands ({})", op_name, ctx.describe(0));
  auto shape = broadcast_shapes(ctx.in(0).shape, ctx.in(1).shape);
  if (!shape) return ctx.error("{} and {} do not broadcast", ctx.describe(0), ctx.describe(1));
  return std::vector<TensorDesc>{{logical || comparison ? DataType::kBool : type, *shape}};
}
}  // namespace

extern const OpDef kElementwiseOp = define_op<ElementwiseAttributes, &infer>(2, 2);

}  // namespace graph
}  // namespace tensoracle
