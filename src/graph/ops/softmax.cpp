// softmax along one axis.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::softmax(Tensor input, const SoftmaxAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const SoftmaxAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  if (!normalize_axis(a.axis, ctx.in(0).shape.rank()))
    return ctx.error("axis {} is out of range for {}", a.axis, ctx.describe(0));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kSoftmaxOp = define_op<SoftmaxAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
