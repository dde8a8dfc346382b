// resize: nearest / linear over the trailing spatial dims, by output size or scale.
#include <cmath>

#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::resize(Tensor input, const ResizeAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const ResizeAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  const std::vector<int64_t>& sizes = a.output_size;
  const std::vector<double>& scales = a.scales;
  if (sizes.empty() == scales.empty()) return ctx.error("exactly one of output_size and scales must be given");
  const size_t n = a.spatial_rank();
  const Dims& x = ctx.in(0).shape;
  if (n > 3 || x.rank() < n + 1) return ctx.error("cannot resize {} trailing dims of {}", n, ctx.describe(0));
  std::vector<int64_t> out(x.values().begin(), x.values().end() - n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x[x.rank() - n + i];
    if (!sizes.empty()) {
      if (sizes[i] < 1) return ctx.error("output_size {} must be >= 1", join_ints(sizes));
      out.push_back(sizes[i]);
    } else {
      if (!(scales[i] > 0)) return ctx.error("scale {} must be > 0", scales[i]);
      // Checked before the cast: a double beyond int64 converts to an undefined value.
      const double scaled = in < 0 ? -1.0 : std::floor(static_cast<double>(in) * scales[i]);
      if (scaled >= 9.2e18) return ctx.error("scale {} makes dim {} of {} too large", scales[i], i, ctx.describe(0));
      out.push_back(static_cast<int64_t>(scaled));
      if (out.back() == 0) return ctx.error("scale {} shrinks dim {} of {} to zero", scales[i], i, ctx.describe(0));
    }
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kResizeOp = define_op<ResizeAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
