// batch_norm (inference): (x - mean) / sqrt(var + eps) * scale + bias per channel of [N, C, ...].
#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "graph/ops/norm_common.h"

namespace tensoracle {

Tensor Network::batch_norm(Tensor input, Tensor scale, Tensor bias, Tensor mean, Tensor variance,
                           const BatchNormAttributes& attrs) {
  return Impl::single(impl_->layer({input, scale, bias, mean, variance}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const BatchNormAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(0, 2, Dims::kMaxRank, "input"));
  TO_RETURN_IF_ERROR(check_epsilon(ctx, a.epsilon));
  const int64_t c = ctx.in(0).shape[1];
  const char* roles[] = {"input", "scale", "bias", "mean", "variance"};
  for (size_t i = 1; i < 5; ++i) {
    TO_RETURN_IF_ERROR(ctx.require(i, roles[i]));
    TO_RETURN_IF_ERROR(check_parameter(ctx, i, Dims{c}));
  }
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kBatchNormOp = define_op<BatchNormAttributes, &infer>(5, 5);

}  // namespace graph
}  // namespace tensoracle
