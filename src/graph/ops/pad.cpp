// pad: constant, reflect, replicate or circular padding of the trailing dims.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::pad(Tensor input, const PadAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const PadAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "input"));
  const PadMode mode = a.mode;
  const Dims& x = ctx.in(0).shape;
  const std::vector<int64_t>& pre = a.pre;
  const std::vector<int64_t>& post = a.post;
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
    if (mode == PadMode::kReflect && most > 0 && most >= d)
      return ctx.error("reflect padding {} must be smaller than dim {} ({}) of {}", most, first + i, d, ctx.describe(0));
    if ((mode == PadMode::kCircular && most > d) || (mode == PadMode::kReplicate && most > 0 && d == 0))
      return ctx.error("{} padding {} does not fit dim {} ({}) of {}", enum_name(mode), most, first + i, d,
                       ctx.describe(0));
    out[first + i] = d + pre[i] + post[i];
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kPadOp = define_op<PadAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
