// constant: a tensor whose bytes are part of the network (weights and literals).
#include "graph/op_def.h"

namespace tensoracle::graph {

namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const ConstantAttributes& a) {
  if (!a.shape.is_static()) return ctx.error("shape {} must be static", a.shape.to_string());
  return std::vector<TensorDesc>{{a.dtype, a.shape}};
}
}  // namespace

extern const OpDef kConstantOp = define_op<ConstantAttributes, &infer>(0, 0);

}  // namespace tensoracle::graph
