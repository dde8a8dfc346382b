// softmax along one axis.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::softmax(Tensor input, const SoftmaxAttributes& attrs) {
  return Impl::single(impl_->layer(*this, OpKind::kSoftmax, {input}, {}, {{"axis", attrs.axis}}, attrs.name));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  const int64_t axis = get_int(ctx.attrs, "axis", -1);
  if (!normalize_axis(axis, ctx.in(0).shape.rank()))
    return ctx.error("axis {} is out of range for {}", axis, ctx.describe(0));
  return std::vector<TensorDesc>{ctx.in(0)};
}
}  // namespace

extern const OpDef kSoftmaxOp{1, 1, &infer};

}  // namespace graph
}  // namespace tensoracle
