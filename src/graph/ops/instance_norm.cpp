// instance_norm: per (n, c) normalization over the spatial dims, per-channel scale and bias.
#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "graph/ops/norm_common.h"

namespace tensoracle {

Tensor Network::instance_norm(Tensor input, Tensor scale, Tensor bias, const InstanceNormAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {scale, bias}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const InstanceNormAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(0, 3, Dims::kMaxRank, "input"));
  TO_RETURN_IF_ERROR(check_epsilon(ctx, a.epsilon));
  const int64_t c = ctx.in(0).shape[1];
  for (size_t i = 1; i < ctx.num_inputs(); ++i) TO_RETURN_IF_ERROR(check_parameter(ctx, i, Dims{c}));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kInstanceNormOp = define_op<InstanceNormAttributes, &infer>(1, 3);

}  // namespace graph
}  // namespace tensoracle
