// deconvolution: transposed 2D convolution (PyTorch ConvTranspose2d semantics).
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::deconvolution(Tensor input, Tensor weight, Tensor bias, const DeconvolutionAttributes& attrs) {
  return Impl::single(impl_->layer({input, weight}, {bias}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const DeconvolutionAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(0, 4, 4, "input"));
  TO_RETURN_IF_ERROR(ctx.require_rank(1, 4, 4, "weight"));
  TO_RETURN_IF_ERROR(ctx.require_same_type(0, 1));
  const Dims& x = ctx.in(0).shape;
  const Dims& w = ctx.in(1).shape;
  const int64_t groups = a.groups;
  if (groups < 1) return ctx.error("groups {} must be >= 1", groups);
  if (!w.is_static()) return ctx.error("weight {} must have a static shape", ctx.describe(1));
  if (w[0] % groups != 0) return ctx.error("weight dim 0 ({}) is not divisible by groups {}", w[0], groups);
  if (x[1] >= 0 && x[1] != w[0])
    return ctx.error("input channels {} of {} != weight dim 0 ({}) ([C, K/groups, kh, kw])", x[1], ctx.describe(0), w[0]);
  const int64_t k = w[1] * groups;
  if (!fits_dims(a.stride, 2) || !fits_dims(a.dilation, 2) || !fits_dims(a.pre_padding, 2) ||
      !fits_dims(a.post_padding, 2) || !fits_dims(a.output_padding, 2))
    return ctx.error("stride, dilation, padding and output_padding must each be empty or have 2 entries");
  const auto stride = a.strides(2), dilation = a.dilations(2), pre = a.pre_paddings(2), post = a.post_paddings(2),
             outpad = a.output_paddings(2);
  std::vector<int64_t> out{x[0], k};
  for (size_t i = 0; i < 2; ++i) {
    if (stride[i] < 1 || dilation[i] < 1)
      return ctx.error("stride {} and dilation {} must be >= 1", join_ints(stride), join_ints(dilation));
    if (pre[i] < 0 || post[i] < 0 || outpad[i] < 0)
      return ctx.error("padding {} / {} and output_padding {} must be >= 0", join_ints(pre), join_ints(post),
                       join_ints(outpad));
    if (outpad[i] >= std::max(stride[i], dilation[i]))
      return ctx.error("output_padding {} must be smaller than stride or dilation", join_ints(outpad));
    const int64_t in = x[2 + i];
    if (in < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t size = (in - 1) * stride[i] - pre[i] - post[i] + dilation[i] * (w[2 + i] - 1) + 1 +
                         outpad[i];
    if (size < 1) return ctx.error("spatial dim {} of the output would be {} (< 1)", i, size);
    out.push_back(size);
  }
  if (ctx.has(2)) {
    TO_RETURN_IF_ERROR(ctx.require_same_type(0, 2));
    if (ctx.in(2).shape != Dims{k}) return ctx.error("bias {} must have shape [{}]", ctx.describe(2), k);
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kDeconvolutionOp = define_op<DeconvolutionAttributes, &infer>(2, 3);

}  // namespace graph
}  // namespace tensoracle
