// Ops whose output size is a dynamic dim, read from a shape value (dynamic_sizes.cpp): Range(0,
// n, 1), as exporters write torch.arange(x.size(1)), and a Slice of a tensor whose end is such a
// size, as HF BERT takes its position ids (position_ids[:, :seq]).
#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// The single element of a scalar or one-element shape value at input i.
Result<SymbolicDim> single_element(NodeContext& ctx, int i) {
  if (const ShapeValue* value = ctx.shape_input(i)) {
    if (value->elements.size() != 1) return ctx.invalid("input {} has {} elements; one is expected", i, value->elements.size());
    return value->elements[0];
  }
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> values, ctx.int_list_input(i));
  if (values.size() != 1) return ctx.invalid("input {} has {} elements; one is expected", i, values.size());
  return SymbolicDim::constant(values[0]);
}

}  // namespace

Status convert_range_to_dim(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const SymbolicDim start, single_element(ctx, 0));
  TO_ASSIGN_OR_RETURN(const SymbolicDim limit, single_element(ctx, 1));
  TO_ASSIGN_OR_RETURN(const SymbolicDim delta, single_element(ctx, 2));
  if (start != SymbolicDim::constant(0) || delta != SymbolicDim::constant(1))
    return ctx.refuse("a Range of dynamic size is supported from 0 in steps of 1 only (torch.arange(n))");
  TO_ASSIGN_OR_RETURN(const Tensor iota, iota_of(ctx, limit, ctx.layer_name()));
  return ctx.set_output(0, iota);
}

Status convert_slice_to_dim(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor data, ctx.input(0));
  const int64_t rank = static_cast<int64_t>(ctx.desc(data).shape.rank());
  std::vector<int64_t> axes{0}, steps{1};
  if (ctx.has_input(3)) {
    TO_ASSIGN_OR_RETURN(axes, ctx.int_list_input(3));
  }
  if (ctx.has_input(4)) {
    TO_ASSIGN_OR_RETURN(steps, ctx.int_list_input(4));
  }
  if (axes.size() != 1 || steps.size() != 1)
    return ctx.refuse("a Slice with a dynamic bound is supported on one axis only; given {} axes", axes.size());
  TO_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, axes[0], rank, "axis"));
  TO_ASSIGN_OR_RETURN(const SymbolicDim start, single_element(ctx, 1));
  TO_ASSIGN_OR_RETURN(const SymbolicDim end, single_element(ctx, 2));
  if (start != SymbolicDim::constant(0) || steps[0] != 1)
    return ctx.refuse("a Slice with a dynamic bound is supported from 0 in steps of 1 only (x[:n])");
  // Element k of the result is data[k] for k < end: a gather by [0, end), which refuses (cpu) an
  // end past the dim at run time instead of clamping it as ONNX does.
  TO_ASSIGN_OR_RETURN(const Tensor indices, iota_of(ctx, end, ctx.layer_name() + "/indices"));
  const Tensor y = ctx.net().gather(data, indices, GatherAttributes().set_axis(axis).set_name(ctx.layer_name()));
  return ctx.set_output(0, y);
}

}  // namespace tensoracle::onnx_import
