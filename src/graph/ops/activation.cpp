// activation: relu, leaky relu, sigmoid, tanh, gelu (erf, tanh), silu, softplus, clip,
// hard sigmoid, hard swish.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::activation(Tensor input, const ActivationAttributes& attrs) {
  AttributeMap map{{"kind", std::string(enum_name(attrs.kind))}};
  // Defaults are stored explicitly so the canonical form does not depend on how they were given.
  map["alpha"] = attrs.alpha.value_or(default_alpha(attrs.kind));
  map["beta"] = attrs.beta.value_or(default_beta(attrs.kind));
  return Impl::single(impl_->layer(*this, OpKind::kActivation, {input}, {}, std::move(map), attrs.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  const std::string kind = get_string(ctx.attrs, "kind");
  if (!parse_enum<ActivationKind>(kind)) return ctx.error("unknown activation '{}'", kind);
  if (kind == "softplus" && get_float(ctx.attrs, "alpha") == 0.0) return ctx.error("softplus alpha must be non-zero");
  if (kind == "clip" && get_float(ctx.attrs, "alpha") > get_float(ctx.attrs, "beta"))
    return ctx.error("clip lower bound {} exceeds upper bound {}", get_float(ctx.attrs, "alpha"),
                     get_float(ctx.attrs, "beta"));
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kActivationOp{1, 1, &infer};

}  // namespace graph
}  // namespace tensoracle
