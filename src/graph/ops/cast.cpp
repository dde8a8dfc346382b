// cast: converts to another element type (the only layer that changes types implicitly).
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::cast(Tensor input, const CastAttributes& attrs) {
  AttributeMap map{{"output_type", std::string(data_type_name(attrs.output_type))}};
  return Impl::single(impl_->layer(*this, OpKind::kCast, {input}, {}, std::move(map), attrs.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  TO_RETURN_IF_ERROR(ctx.require(0, "input"));
  const std::string* name = find_string(ctx.attrs, "output_type");
  if (!name) return ctx.error("attribute 'output_type' is required");
  auto type = parse_data_type(*name);
  if (!type.is_ok()) return ctx.error("output_type: {}", type.status().message());
  return std::vector<TensorDesc>{{*type, ctx.in(0).shape}};
}
}  // namespace

extern const OpDef kCastOp{1, 1, &infer};

}  // namespace graph
}  // namespace tensoracle
