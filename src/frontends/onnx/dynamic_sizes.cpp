// Tensors whose size is a dynamic dim (op_table.h): an iota layer reads the size at run time
// from a tensor that has the dim (the dim symbols know one), and everything else is built from
// it -- Range(0, n, 1) is the iota, a Slice of [0, n) a gather by it, a broadcast of a dim of 1
// to n a gather by its zeros, and the size itself, as a value, the sum of its ones.
#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

Result<Tensor> checked(NodeContext& ctx, Tensor t) {
  TO_RETURN_IF_ERROR(ctx.network_status());
  return t;
}

Result<Tensor> int64_scalar(NodeContext& ctx, int64_t value, const std::string& name) {
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(DataType::kInt64, Dims{}));
  *array.data_as<int64_t>() = value;
  return checked(ctx, ctx.net().add_constant(std::move(array), name));
}

Result<Tensor> arithmetic(NodeContext& ctx, Tensor a, Tensor b, ElementwiseOp op, const std::string& name) {
  return checked(ctx, ctx.net().elementwise(a, b, ElementwiseAttributes().set_op(op).set_name(name)));
}

std::string describe_dim(NodeContext& ctx, const SymbolicDim& n) {
  std::string out = n.factor != 1 || n.is_constant() ? std::to_string(n.factor) : "";
  for (int s : n.symbols) out += (out.empty() ? "the " : " * the ") + ctx.symbols().describe(s);
  return out;
}

}  // namespace

Result<Tensor> iota_of(NodeContext& ctx, const SymbolicDim& n, const std::string& name) {
  if (n.is_constant() || n.factor != 1 || n.symbols.size() != 1)
    return ctx.refuse("a tensor of {} elements is not supported (a size that is one dynamic dim is)", describe_dim(ctx, n));
  const std::optional<std::pair<Tensor, size_t>> source = ctx.symbols().source(n);
  if (!source) return ctx.refuse("no tensor of the network has the {} as a dim to read it from", describe_dim(ctx, n));
  return iota_along(ctx, source->first, source->second, name);
}

Result<Tensor> iota_along(NodeContext& ctx, Tensor like, size_t axis, const std::string& name) {
  const Tensor y = ctx.net().iota(like, IotaAttributes().set_axis(static_cast<int64_t>(axis)).set_name(name));
  TO_ASSIGN_OR_RETURN(const Tensor out, checked(ctx, y));
  ctx.symbols().set(out, 0, ctx.symbols().dim(ctx.net(), like, axis));
  return out;
}

Result<Tensor> zeros_like_iota(NodeContext& ctx, Tensor iota, const std::string& name) {
  TO_ASSIGN_OR_RETURN(const Tensor zero, int64_scalar(ctx, 0, name + "/zero"));
  TO_ASSIGN_OR_RETURN(const Tensor zeros, arithmetic(ctx, iota, zero, ElementwiseOp::kMul, name));
  ctx.symbols().set(zeros, 0, ctx.symbols().dim(ctx.net(), iota, 0));
  return zeros;
}

Result<Tensor> size_value(NodeContext& ctx, Tensor t, size_t axis, const std::string& name) {
  TO_ASSIGN_OR_RETURN(const Tensor iota, iota_along(ctx, t, axis, name + "/iota"));
  TO_ASSIGN_OR_RETURN(const Tensor zeros, zeros_like_iota(ctx, iota, name + "/zeros"));
  TO_ASSIGN_OR_RETURN(const Tensor one, int64_scalar(ctx, 1, name + "/one"));
  TO_ASSIGN_OR_RETURN(const Tensor ones, arithmetic(ctx, zeros, one, ElementwiseOp::kAdd, name + "/ones"));
  return checked(ctx, ctx.net().reduce(ones, ReduceAttributes().set_op(ReduceOp::kSum).set_axes({0}).set_name(name)));
}

}  // namespace tensoracle::onnx_import
