// pooling: max / average over 1, 2 or 3 trailing dims; count_include_pad; ceil_mode; global.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::pooling(Tensor input, const PoolingAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
// The stride is stored explicitly (the window when not given).
void resolve(PoolingAttributes& a) {
  if (a.stride.empty()) a.stride = a.window;
}

Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const PoolingAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  const Dims& x = ctx.in(0).shape;
  if (a.global) {
    TO_RETURN_IF_ERROR(ctx.require_rank(0, 3, Dims::kMaxRank, "input"));
    if (!a.window.empty() || !a.stride.empty() || !a.pre_padding.empty() || !a.post_padding.empty())
      return ctx.error("global pooling takes no window, stride or padding");
    std::vector<int64_t> out{x[0], x[1]};
    out.resize(x.rank(), 1);
    return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
  }
  const std::vector<int64_t>& window = a.window;
  const size_t n = window.size();
  if (n < 1 || n > 3) return ctx.error("window {} must have 1 to 3 entries", join_ints(window));
  if (x.rank() < n + 1) return ctx.error("{} has fewer than {} dims to pool over", ctx.describe(0), n + 1);
  if (!fits_dims(a.stride, n) || !fits_dims(a.pre_padding, n) || !fits_dims(a.post_padding, n))
    return ctx.error("stride and padding must each be empty or have {} entries", n);
  const auto stride = a.strides(n), pre = a.pre_paddings(n), post = a.post_paddings(n);
  const bool ceil_mode = a.ceil_mode;
  std::vector<int64_t> out(x.values().begin(), x.values().end() - n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t k = window[i], s = stride[i], p0 = pre[i], p1 = post[i];
    if (k < 1 || s < 1 || p0 < 0 || p1 < 0)
      return ctx.error("window {} and stride {} must be >= 1, padding >= 0", join_ints(window), join_ints(stride));
    if (p0 >= k || p1 >= k) return ctx.error("padding must be smaller than the window {}", join_ints(window));
    const int64_t in = x[x.rank() - n + i];
    if (in < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t span = in + p0 + p1 - k;
    if (span < 0) return ctx.error("window {} is larger than the padded input {}", join_ints(window), ctx.describe(0));
    int64_t size = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // A window that would start in the trailing padding is dropped (PyTorch's rule).
    if (ceil_mode && (size - 1) * s >= in + p0) --size;
    out.push_back(size);
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kPoolingOp = define_op<PoolingAttributes, &infer, &resolve>(1, 1);

}  // namespace graph
}  // namespace tensoracle
