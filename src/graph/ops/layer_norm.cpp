// layer_norm: normalizes over dims [axis, rank) with optional scale and bias of those dims.
#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "graph/ops/norm_common.h"

namespace tensoracle {

Tensor Network::layer_norm(Tensor input, Tensor scale, Tensor bias, const LayerNormAttributes& attrs) {
  AttributeMap map{{"axis", attrs.axis}, {"epsilon", attrs.epsilon}};
  return Impl::single(impl_->layer(*this, OpKind::kLayerNorm, {input}, {scale, bias}, std::move(map), attrs.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(check_epsilon(ctx));
  TO_ASSIGN_OR_RETURN(Dims normalized, trailing_dims(ctx));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) TO_RETURN_IF_ERROR(check_parameter(ctx, i, normalized));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kLayerNormOp{1, 3, &infer};

}  // namespace graph
}  // namespace tensoracle
