// matmul: numpy.matmul semantics with optional transposes of the last two dims.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::matmul(Tensor a, Tensor b, const MatMulAttributes& attrs) {
  return Impl::single(impl_->layer({a, b}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const MatMulAttributes& attrs) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "a"));
  TO_RETURN_IF_ERROR(ctx.require_float(1, "b"));
  TO_RETURN_IF_ERROR(ctx.require_same_type(0, 1));
  Dims a = ctx.in(0).shape;
  Dims b = ctx.in(1).shape;
  if (a.rank() == 0 || b.rank() == 0) return ctx.error("operands must have rank >= 1 ({}, {})", ctx.describe(0), ctx.describe(1));
  const bool a_vector = a.rank() == 1;
  const bool b_vector = b.rank() == 1;
  std::vector<int64_t> av = a.values(), bv = b.values();
  if (a_vector) av.insert(av.begin(), 1);
  if (b_vector) bv.push_back(1);
  if (attrs.transpose_a && !a_vector) std::swap(av[av.size() - 1], av[av.size() - 2]);
  if (attrs.transpose_b && !b_vector) std::swap(bv[bv.size() - 1], bv[bv.size() - 2]);
  const int64_t m = av[av.size() - 2], ka = av.back(), kb = bv[bv.size() - 2], n = bv.back();
  if (!dims_agree(ka, kb))
    return ctx.error("inner dimensions differ: {} gives K={}, {} gives K={} (after transposes)", ctx.describe(0), ka,
                     ctx.describe(1), kb);
  auto batch = broadcast_shapes(Dims(std::vector<int64_t>(av.begin(), av.end() - 2)),
                                Dims(std::vector<int64_t>(bv.begin(), bv.end() - 2)));
  if (!batch) return ctx.error("batch dims of {} and {} do not broadcast", ctx.describe(0), ctx.describe(1));
  std::vector<int64_t> out = batch->values();
  if (!a_vector) out.push_back(m);
  if (!b_vector) out.push_back(n);
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kMatMulOp = define_op<MatMulAttributes, &infer>(2, 2);

}  // namespace graph
}  // namespace tensoracle
