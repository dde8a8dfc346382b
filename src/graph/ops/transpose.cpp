// transpose (shuffle): output dim i is input dim perm[i].
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::transpose(Tensor input, const TransposeAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const TransposeAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "input"));
  const Dims& x = ctx.in(0).shape;
  const std::vector<int64_t>& perm = a.perm;
  std::vector<bool> seen(x.rank(), false);
  bool ok = perm.size() == x.rank();
  std::vector<int64_t> out;
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    ok = perm[i] >= 0 && perm[i] < static_cast<int64_t>(x.rank()) && !seen[perm[i]];
    if (ok) {
      seen[perm[i]] = true;
      out.push_back(x[perm[i]]);
    }
  }
  if (!ok) return ctx.error("perm {} is not a permutation of the {} dims of {}", join_ints(perm), x.rank(), ctx.describe(0));
  return std::vector<TensorDesc>{{ctx.in(0).dtype, Dims(out)}};
}
}  // namespace

extern const OpDef kTransposeOp = define_op<TransposeAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
