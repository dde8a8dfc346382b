// unary: elementwise math functions of one operand.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::unary(Tensor input, const UnaryAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const UnaryAttributes& a) {
  if (unary_takes_signed_integers(a.op)) {
    TO_RETURN_IF_ERROR(ctx.require_type(0, {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                                            DataType::kInt8, DataType::kInt32, DataType::kInt64},
                                        "input"));
  } else {
    TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  }
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kUnaryOp = define_op<UnaryAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
