// pad: constant, reflect, replicate or circular padding of the trailing dims.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::pad(Tensor input, const PadAttributes& a) {
  AttributeMap map{{"pre", a.pre}, {"post", a.post}, {"mode", std::string(enum_name(a.mode))}, {"value", a.value}};
  return Impl::single(impl_->layer(*this, OpKind::kPad, {input}, {}, std::move(map), a.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  TO_RETURN_IF_ERROR(ctx.require(0, "input"));
  const auto mode = parse_enum<PadMode>(get_string(ctx.attrs, "mode"));
  if (!mode) return ctx.error("unknown mode '{}'", get_string(ctx.attrs, "mode"));
  const Dims& x = ctx.in(0).shape;
  const std::vector<int64_t> pre = get_ints(ctx.attrs, "pre");
  const std::vector<int64_t> post = get_ints(ctx.attrs, "post");
  if (pre.size() != post.size() || pre.size() > x.rank())
    return ctx.error("pre {} and post {} must have the same length, at most the rank of {}", join_ints(pre),
                     join_ints(post), ctx.describe(0));
  std::vector<int64_t> out = x.values();
  const size_t first = x.rank() - pre.size();
  for (size_t i = 0; i < pre.size(); ++i) {
    const int64_t d = x[first + i];
    if (pre[i] < 0 || post[i] < 0) return ctx.error("padding {} / {} must be >= 0", join_ints(pre), join_ints(post));
    if (d < 0) continue;
    const int64_t most = std::max(pre[i], post[i]);
    if (*mode == PadMode::kReflect && most > 0 && most >= d)
      return ctx.error("reflect padding {} must be smaller than dim {} ({}) of {}", most, first + i, d, ctx.describe(0));
    if ((*mode == PadMode::kCircular && most > d) || (*mode == PadMode::kReplicate && most > 0 && d == 0))
      return ctx.error("{} padding {} does not fit dim {} ({}) of {}", enum_name(*mode), most, first + i, d,
                       ctx.describe(0));
    out[first + i] = d + pre[i] + post[i];
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kPadOp{1, 1, &infer};

}  // namespace graph
}  // namespace tensoracle
