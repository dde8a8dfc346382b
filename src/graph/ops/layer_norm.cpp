// layer_norm: normalizes over dims [axis, rank) with optional scale and bias of those dims.
#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "graph/ops/norm_common.h"

namespace tensoracle {

Tensor Network::layer_norm(Tensor input, Tensor scale, Tensor bias, const LayerNormAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {scale, bias}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const LayerNormAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(check_epsilon(ctx, a.epsilon));
  TO_ASSIGN_OR_RETURN(Dims normalized, trailing_dims(ctx, a.axis));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) TO_RETURN_IF_ERROR(check_parameter(ctx, i, normalized));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kLayerNormOp = define_op<LayerNormAttributes, &infer>(1, 3);

}  // namespace graph
}  // namespace tensoracle
