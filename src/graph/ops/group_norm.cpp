// group_norm: [N, C, ...] with C split into groups, per-channel scale and bias.
#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "graph/ops/norm_common.h"

namespace tensoracle {

Tensor Network::group_norm(Tensor input, Tensor scale, Tensor bias, const GroupNormAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {scale, bias}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const GroupNormAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(0, 2, Dims::kMaxRank, "input"));
  TO_RETURN_IF_ERROR(check_epsilon(ctx, a.epsilon));
  const int64_t groups = a.groups;
  const int64_t c = ctx.in(0).shape[1];
  if (groups < 1 || (c >= 0 && c % groups != 0))
    return ctx.error("groups {} must be >= 1 and divide the {} channels of {}", groups, c, ctx.describe(0));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) TO_RETURN_IF_ERROR(check_parameter(ctx, i, Dims{c}));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kGroupNormOp = define_op<GroupNormAttributes, &infer>(1, 3);

}  // namespace graph
}  // namespace tensoracle
