// The ONNX ops the importer converts, one converter per op type of the default domain. Each
// converter reads the node's inputs and attributes through its NodeContext, refuses what the
// layer set cannot express (naming the attribute or type and value), adds its layers and binds
// the node's outputs.
#pragma once

#include <string>
#include <vector>

#include "frontends/onnx/node_context.h"

namespace tensoracle::onnx_import {

using ConvertFn = Status (*)(NodeContext&);

struct OpConverter {
  const char* op_type;
  ConvertFn convert;
};

// The converters of each family (ops_<family>.cpp).
const std::vector<OpConverter>& pointwise_converters();
const std::vector<OpConverter>& composite_converters();
const std::vector<OpConverter>& nn_converters();
const std::vector<OpConverter>& einsum_converters();
const std::vector<OpConverter>& transformer_converters();
const std::vector<OpConverter>& image_converters();
const std::vector<OpConverter>& shape_converters();
const std::vector<OpConverter>& layout_converters();
const std::vector<OpConverter>& gather_converters();
const std::vector<OpConverter>& generate_converters();
const std::vector<OpConverter>& quantize_converters();

// The converter of `op_type` computing on shape values (shape_value.h, ops_shape_value.cpp), used
// instead of the op's own converter when a node reads a shape value; nullptr when there is none.
ConvertFn find_shape_value_converter(const std::string& op_type);

// The converter of `op_type` in the default domain, or nullptr.
ConvertFn find_converter(const std::string& op_type);
// Every supported op type, sorted.
std::vector<std::string> supported_op_types();

// An identity layer: a network output must be a tensor of its own (not a graph input, not
// another output).
Tensor copy_of(Network& net, Tensor t, const std::string& name);

// ---- helpers shared by the converters ----

// `axis` in [0, rank) from ONNX's [-rank, rank); an error naming `what` otherwise.
Result<int64_t> normalize_axis(NodeContext& ctx, int64_t axis, int64_t rank, const char* what);

// A reshape of `x` to `out`, where out[j] = -1 marks the dynamic dim that comes from input dim
// from[j] (or -1 for a new dim of 1). A dynamic dim at its own index is copied (0); a single
// other dynamic dim is inferred (-1); more than that cannot be expressed by a reshape.
Result<Tensor> reshape_moving(NodeContext& ctx, Tensor x, std::vector<int64_t> out, const std::vector<int64_t>& from,
                              const std::string& name);

// A Reshape of `x` to the shape value `target` (ops_shape_value.cpp): each element a constant, 0
// (copy) where it equals x's dim at the same place, -1 for the single one left; the output's dims
// get their symbolic values. Binds output 0.
Status reshape_to_shape_value(NodeContext& ctx, Tensor x, const ShapeValue& target);
// Expand's target when it is the shape value `target`, as constants: an element equal to x's dim
// at the same place (right-aligned) becomes 1, which broadcasting reads as "keep x's dim"; a
// dynamic element where x's dim is 1 (or absent) becomes 1 too and is listed in `to_dynamic` by
// its index in `target`, for the caller to broadcast; any other element that is not constant is
// refused.
Result<std::vector<int64_t>> expand_target(NodeContext& ctx, Tensor x, const ShapeValue& target,
                                           std::map<size_t, SymbolicDim>& to_dynamic);

// A reduction's keepdims, noop_with_empty_axes and axes (attribute or constant input 1);
// nullopt when it is the identity (no axes and noop_with_empty_axes 1). Unnamed.
Result<std::optional<ReduceAttributes>> reduce_attributes(NodeContext& ctx, ReduceOp op);

// Cast and CastLike: input 0 cast to `type`, with the node's `saturate` checked.
Status cast_to(NodeContext& ctx, DataType type);

// The indices ONNX's Slice takes from a dim of size `dim` (step != 0): start, start+step, ...,
// `size` of them (start is 0 when size is 0).
struct SliceRange {
  int64_t start;
  int64_t size;
};
SliceRange slice_range(int64_t start, int64_t end, int64_t step, int64_t dim);

// ---- sizes known only at run time (dynamic_sizes.cpp) ----

// int64 [0, n) where n is one dynamic dim (a SymbolicDim of one symbol); an iota layer reads it
// from a tensor the dim symbols know to have it. Refused naming the size otherwise.
Result<Tensor> iota_of(NodeContext& ctx, const SymbolicDim& n, const std::string& name);
// int64 [0, n), n = dim `axis` of `like`.
Result<Tensor> iota_along(NodeContext& ctx, Tensor like, size_t axis, const std::string& name);
// int64 zeros of the iota's size: the indices of a gather that broadcasts a dim of 1 to it.
Result<Tensor> zeros_like_iota(NodeContext& ctx, Tensor iota, const std::string& name);
// The size of dim `axis` of `t` as a scalar int64 tensor computed at run time.
Result<Tensor> size_value(NodeContext& ctx, Tensor t, size_t axis, const std::string& name);

// Range(0, n, 1) and Slice(x, 0, n) on one axis where n is a shape value (ops_dynamic_size.cpp).
Status convert_range_to_dim(NodeContext& ctx);
Status convert_slice_to_dim(NodeContext& ctx);

// A constant value owning `array`.
std::shared_ptr<const ConstantValue> owned_constant(HostArray array);

// A constant int64 tensor of the network holding `values` (shape [values.size()]).
Result<Tensor> int64_constant(NodeContext& ctx, const std::vector<int64_t>& values, const std::string& name);

// A scalar constant of the floating type `dtype` holding `value` (rounded to the type).
Result<Tensor> float_scalar(NodeContext& ctx, DataType dtype, double value, const std::string& name);

}  // namespace tensoracle::onnx_import
