// activation: relu, leaky relu, sigmoid, tanh, gelu (erf, tanh), silu, softplus, clip,
// hard sigmoid, hard swish.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::activation(Tensor input, const ActivationAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
// Defaults are stored explicitly so the canonical form does not depend on how they were given.
void resolve(ActivationAttributes& a) {
  a.alpha = a.alpha_value();
  a.beta = a.beta_value();
}

Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const ActivationAttributes& a) {
  if (a.kind == ActivationKind::kSoftplus && a.alpha_value() == 0.0) return ctx.error("softplus alpha must be non-zero");
  if (a.kind == ActivationKind::kClip && a.alpha_value() > a.beta_value())
    return ctx.error("clip lower bound {} exceeds upper bound {}", a.alpha_value(), a.beta_value());
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kActivationOp = define_op<ActivationAttributes, &infer, &resolve>(1, 1);

}  // namespace graph
}  // namespace tensoracle
