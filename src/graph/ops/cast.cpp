// cast: converts to another element type (the only layer that changes types implicitly).
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::cast(Tensor input, const CastAttributes& attrs) {
  return Impl::single(impl_->layer({input}, {}, attrs));
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const CastAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require(0, "input"));
  return std::vector<TensorDesc>{{a.output_type, ctx.in(0).shape}};
}
}  // namespace

extern const OpDef kCastOp = define_op<CastAttributes, &infer>(1, 1);

}  // namespace graph
}  // namespace tensoracle
