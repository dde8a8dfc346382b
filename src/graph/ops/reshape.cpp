// reshape (shuffle): 0 copies the input dim, one -1 is inferred.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::reshape(Tensor input, const ReshapeAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const ReshapeAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "input"));
  const Dims& x = ctx.in(0).shape;
  const std::vector<int64_t>& target = a.shape;
  if (target.size() > Dims::kMaxRank) return ctx.error("shape {} exceeds rank {}", join_ints(target), Dims::kMaxRank);
  std::vector<int64_t> out(target.size());
  int infer_at = -1;
  int64_t known = 1;
  bool dynamic = false;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0) {
      if (i >= x.rank()) return ctx.error("shape {}: 0 at index {} but {} has rank {}", join_ints(target), i, ctx.describe(0), x.rank());
      d = x[i];
      if (d < 0) dynamic = true;
    } else if (d == -1) {
      if (infer_at >= 0) return ctx.error("shape {} has more than one -1", join_ints(target));
      infer_at = static_cast<int>(i);
    } else if (d < -1) {
      return ctx.error("shape {} has invalid dim {}", join_ints(target), d);
    }
    out[i] = d;
    if (d >= 0 && static_cast<int>(i) != infer_at) {
      auto next = checked_mul(known, d);
      if (!next) return ctx.error("shape {} overflows", join_ints(target));
      known = *next;
    }
  }
  if (!x.is_static()) {
    // A -1 is still resolvable when every dynamic input dim is copied through by a 0: the other
    // input dims then hold exactly the elements the non-copied output dims share.
    int64_t rest = 1;
    bool resolvable = infer_at >= 0;
    for (size_t i = 0; resolvable && i < x.rank(); ++i) {
      const bool copied = i < target.size() && target[i] == 0;
      if (copied) continue;
      if (x[i] < 0) resolvable = false;
      else rest *= x[i];
    }
    int64_t known_other = 1;
    for (size_t i = 0; resolvable && i < target.size(); ++i)
      if (target[i] > 0) known_other *= target[i];
    if (resolvable && known_other > 0 && rest % known_other == 0) out[infer_at] = rest / known_other;
    // Otherwise a backend resolves the -1 from the concrete input shape at run time.
    return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
  }
  TO_ASSIGN_OR_RETURN(int64_t count, x.element_count());
  if (infer_at >= 0) {
    if (dynamic) return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
    if (known == 0 || count % known != 0)
      return ctx.error("cannot reshape {} ({} elements) to {}", ctx.describe(0), count, join_ints(target));
    out[infer_at] = count / known;
  } else if (known != count) {
    return ctx.error("cannot reshape {} ({} elements) to {} ({} elements)", ctx.describe(0), count,
                     join_ints(target), known);
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kReshapeOp = define_op<ReshapeAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
