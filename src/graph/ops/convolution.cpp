// convolution: 1D/2D/3D, groups, stride, dilation, explicit pre/post padding (docs/ops.md).
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::convolution(Tensor input, Tensor weight, Tensor bias, const ConvolutionAttributes& a) {
  AttributeMap attrs{{"stride", a.stride},           {"dilation", a.dilation}, {"pre_padding", a.pre_padding},
                     {"post_padding", a.post_padding}, {"groups", a.groups}};
  return Impl::single(impl_->layer(*this, OpKind::kConvolution, {input, weight}, {bias}, std::move(attrs), a.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
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
  const int64_t groups = get_int(ctx.attrs, "groups", 1);
  if (groups < 1) return ctx.error("groups {} must be >= 1", groups);
  if (!w.is_static()) return ctx.error("weight {} must have a static shape", ctx.describe(1));
  const int64_t k = w[0];
  if (k % groups != 0) return ctx.error("output channels {} are not divisible by groups {}", k, groups);
  if (x[1] >= 0 && x[1] != w[1] * groups)
    return ctx.error("input channels {} of {} != weight dim 1 ({}) * groups ({})", x[1], ctx.describe(0), w[1], groups);
  auto stride = spatial_attr(ctx.attrs, "stride", n, 1);
  auto dilation = spatial_attr(ctx.attrs, "dilation", n, 1);
  auto pre = spatial_attr(ctx.attrs, "pre_padding", n, 0);
  auto post = spatial_attr(ctx.attrs, "post_padding", n, 0);
  if (!stride || !dilation || !pre || !post)
    return ctx.error("stride {}, dilation {}, pre_padding {} and post_padding {} must each be empty or have {} entries",
                     join_ints(get_ints(ctx.attrs, "stride")), join_ints(get_ints(ctx.attrs, "dilation")),
                     join_ints(get_ints(ctx.attrs, "pre_padding")), join_ints(get_ints(ctx.attrs, "post_padding")), n);
  std::vector<int64_t> out{x[0], k};
  for (size_t i = 0; i < n; ++i) {
    if ((*stride)[i] < 1) return ctx.error("stride {} must be >= 1", join_ints(*stride));
    if ((*dilation)[i] < 1) return ctx.error("dilation {} must be >= 1", join_ints(*dilation));
    if ((*pre)[i] < 0 || (*post)[i] < 0)
      return ctx.error("padding {} / {} must be >= 0", join_ints(*pre), join_ints(*post));
    const int64_t in = x[2 + i];
    if (in < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t span = (*dilation)[i] * (w[2 + i] - 1) + 1;
    const int64_t padded = in + (*pre)[i] + (*post)[i];
    if (padded < span)
      return ctx.error("spatial dim {} of {} (padded to {}) is smaller than the dilated kernel extent {}", i,
                       ctx.describe(0), padded, span);
    out.push_back((padded - span) / (*stride)[i] + 1);
  }
  if (ctx.has(2)) {
    TO_RETURN_IF_ERROR(ctx.require_same_type(0, 2));
    if (ctx.in(2).shape != Dims{k}) return ctx.error("bias {} must have shape [{}]", ctx.describe(2), k);
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kConvolutionOp{2, 3, &infer};

}  // namespace graph
}  // namespace tensoracle
