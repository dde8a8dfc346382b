// constant: a tensor whose bytes are part of the network (weights and literals).
#include "graph/op_def.h"

namespace tensoracle::graph {

namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  const std::string* dtype = find_string(ctx.attrs, "dtype");
  const std::vector<int64_t>* shape = find_ints(ctx.attrs, "shape");
  if (!dtype || !shape) return ctx.error("attributes 'dtype' and 'shape' are required");
  TO_ASSIGN_OR_RETURN(DataType type, parse_data_type(*dtype));
  Dims dims(*shape);
  if (!dims.is_static()) return ctx.error("shape {} must be static", dims.to_string());
  return std::vector<TensorDesc>{{type, dims}};
}
}  // namespace

extern const OpDef kConstantOp{0, 0, &infer};

}  // namespace tensoracle::graph
