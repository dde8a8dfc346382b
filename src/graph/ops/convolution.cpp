// convolution: 1D/2D/3D, groups, stride, dilation, explicit pre/post padding (docs/ops.md).
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::convolution(Tensor input, Tensor weight, Tensor bias, const ConvolutionAttributes& attrs) {
  return Impl::single(impl_->layer({input, weight}, {bias}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const ConvolutionAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(0, 3, 5, "input"));
  TO_RETURN_IF_ERROR(ctx.require(1, "weight"));
  TO_RETURN_IF_ERROR(ctx.require_same_type(0, 1));
  const Dims& x = ctx.in(0).shape;
  const Dims& w = ctx.in(1).shape;
  if (w.rank() != x.rank())
    return ctx.error("weight {} must have rank {} ([K, C/groups, kernel...]) to match {}", ctx.describe(1), x.rank(),
                     ctx.describe(0));
  const size_t n = x.rank() - 2;
  const int64_t groups = a.groups;
  if (groups < 1) return ctx.error("groups {} must be >= 1", groups);
  if (!w.is_static()) return ctx.error("weight {} must have a static shape", ctx.describe(1));
  const int64_t k = w[0];
  if (k % groups != 0) return ctx.error("output channels {} are not divisible by groups {}", k, groups);
  if (x[1] >= 0 && x[1] != w[1] * groups)
    return ctx.error("input channels {} of {} != weight dim 1 ({}) * groups ({})", x[1], ctx.describe(0), w[1], groups);
  if (!fits_dims(a.stride, n) || !fits_dims(a.dilation, n) || !fits_dims(a.pre_padding, n) || !fits_dims(a.post_padding, n))
    return ctx.error("stride {}, dilation {}, pre_padding {} and post_padding {} must each be empty or have {} entries",
                     join_ints(a.stride), join_ints(a.dilation), join_ints(a.pre_padding), join_ints(a.post_padding), n);
  const auto stride = a.strides(n), dilation = a.dilations(n), pre = a.pre_paddings(n), post = a.post_paddings(n);
  std::vector<int64_t> out{x[0], k};
  for (size_t i = 0; i < n; ++i) {
    if (stride[i] < 1) return ctx.error("stride {} must be >= 1", join_ints(stride));
    if (dilation[i] < 1) return ctx.error("dilation {} must be >= 1", join_ints(dilation));
    if (pre[i] < 0 || post[i] < 0)
      return ctx.error("padding {} / {} must be >= 0", join_ints(pre), join_ints(post));
    const int64_t in = x[2 + i];
    if (in < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t span = dilation[i] * (w[2 + i] - 1) + 1;
    const int64_t padded = in + pre[i] + post[i];
    if (padded < span)
      return ctx.error("spatial dim {} of {} (padded to {}) is smaller than the dilated kernel extent {}", i,
                       ctx.describe(0), padded, span);
    out.push_back((padded - span) / stride[i] + 1);
  }
  if (ctx.has(2)) {
    TO_RETURN_IF_ERROR(ctx.require_same_type(0, 2));
    if (ctx.in(2).shape != Dims{k}) return ctx.error("bias {} must have shape [{}]", ctx.describe(2), k);
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kConvolutionOp = define_op<ConvolutionAttributes, &infer>(2, 3);

}  // namespace graph
}  // namespace tensoracle
