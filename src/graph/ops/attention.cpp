// attention: scaled dot-product attention with an optional causal or additive/bool mask.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::attention(Tensor q, Tensor k, Tensor v, Tensor mask, const AttentionAttributes& attrs) {
  return Impl::single(impl_->layer({q, k, v}, {mask}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const AttentionAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "q"));
  TO_RETURN_IF_ERROR(ctx.require_rank(0, 2, Dims::kMaxRank, "q"));
  TO_RETURN_IF_ERROR(ctx.require_rank(1, 2, Dims::kMaxRank, "k"));
  TO_RETURN_IF_ERROR(ctx.require_rank(2, 2, Dims::kMaxRank, "v"));
  TO_RETURN_IF_ERROR(ctx.require_same_type(0, 1));
  TO_RETURN_IF_ERROR(ctx.require_same_type(0, 2));
  const Dims& q = ctx.in(0).shape;
  const Dims& k = ctx.in(1).shape;
  const Dims& v = ctx.in(2).shape;
  auto tail = [](const Dims& d, size_t i) { return d[d.rank() - i]; };
  auto batch_of = [](const Dims& d) { return Dims(std::vector<int64_t>(d.values().begin(), d.values().end() - 2)); };
  if (!dims_agree(tail(q, 1), tail(k, 1)))
    return ctx.error("q {} and k {} differ in the head dim", ctx.describe(0), ctx.describe(1));
  if (!dims_agree(tail(k, 2), tail(v, 2)))
    return ctx.error("k {} and v {} differ in the sequence dim", ctx.describe(1), ctx.describe(2));
  auto batch = broadcast_shapes(batch_of(q), batch_of(k));
  if (batch) batch = broadcast_shapes(*batch, batch_of(v));
  if (!batch) return ctx.error("batch dims of q, k and v do not broadcast");
  if (a.scale && !(*a.scale > 0 || *a.scale < 0)) return ctx.error("scale {} must be non-zero", *a.scale);
  std::vector<int64_t> out = batch->values();
  out.push_back(tail(q, 2));
  out.push_back(tail(v, 1));
  if (ctx.has(3)) {
    const DataType mt = ctx.in(3).dtype;
    if (mt != DataType::kBool && mt != ctx.in(0).dtype)
      return ctx.error("mask {} must be bool or the type of q ({})", ctx.describe(3), data_type_name(ctx.in(0).dtype));
    std::vector<int64_t> scores = batch->values();
    scores.push_back(tail(q, 2));
    scores.push_back(tail(k, 2));
    auto b = broadcast_shapes(ctx.in(3).shape, Dims(scores));
    if (!b || b->rank() != scores.size())
      return ctx.error("mask {} does not broadcast to the scores {}", ctx.describe(3), join_ints(scores));
  }
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kAttentionOp = define_op<AttentionAttributes, &infer>(3, 4);

}  // namespace graph
}  // namespace tensoracle
