// rms_norm: x / sqrt(mean(x^2) + eps) over dims [axis, rank), times an optional scale.
#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "graph/ops/norm_common.h"

namespace tensoracle {

Tensor Network::rms_norm(Tensor input, Tensor scale, const RmsNormAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {scale}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const RmsNormAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(check_epsilon(ctx, a.epsilon));
  TO_ASSIGN_OR_RETURN(Dims normalized, trailing_dims(ctx, a.axis));
  if (ctx.num_inputs() > 1) TO_RETURN_IF_ERROR(check_parameter(ctx, 1, normalized));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kRmsNormOp = define_op<RmsNormAttributes, &infer>(1, 2);

}  // namespace graph
}  // namespace tensoracle
