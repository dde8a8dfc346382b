// group_norm: [N, C, ...] with C split into groups, per-channel scale and bias.
#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "graph/ops/norm_common.h"

namespace tensoracle {

Tensor Network::group_norm(Tensor input, Tensor scale, Tensor bias, const GroupNormAttributes& attrs) {
  AttributeMap map{{"groups", attrs.groups}, {"epsilon", attrs.epsilon}};
  return Impl::single(impl_->layer(*this, OpKind::kGroupNorm, {input}, {scale, bias}, std::move(map), attrs.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(0, 2, Dims::kMaxRank, "input"));
  TO_RETURN_IF_ERROR(check_epsilon(ctx));
  const int64_t groups = get_int(ctx.attrs, "groups", 1);
  const int64_t c = ctx.in(0).shape[1];
  if (groups < 1 || (c >= 0 && c % groups != 0))
    return ctx.error("groups {} must be >= 1 and divide the {} channels of {}", groups, c, ctx.describe(0));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) TO_RETURN_IF_ERROR(check_parameter(ctx, i, Dims{c}));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kGroupNormOp{1, 3, &infer};

}  // namespace graph
}  // namespace tensoracle
