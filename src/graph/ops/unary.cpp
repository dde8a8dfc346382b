// unary: elementwise math functions of one operand.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::unary(Tensor input, const UnaryAttributes& attrs) {
  AttributeMap map{{"op", std::string(enum_name(attrs.op))}};
  return Impl::single(impl_->layer(*this, OpKind::kUnary, {input}, {}, std::move(map), attrs.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  const std::string op_name = get_string(ctx.attrs, "op");
  auto op = parse_enum<UnaryOp>(op_name);
  if (!op) return ctx.error("unknown op '{}'", op_name);
  if (unary_takes_signed_integers(*op)) {
    TO_RETURN_IF_ERROR(ctx.require_type(0, {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                                            DataType::kInt8, DataType::kInt32, DataType::kInt64},
                                        "input"));
  } else {
    TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  }
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kUnaryOp{1, 1, &infer};

}  // namespace graph
}  // namespace tensoracle
