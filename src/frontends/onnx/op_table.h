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
const std::vector<OpConverter>& generate_converters();
const std::vector<OpConverter>& quantize_converters();

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

// A reduction's keepdims, noop_with_empty_axes and axes (attribute or constant input 1);
// nullopt when it is the identity (no axes and noop_with_empty_axes 1). Unnamed.
Result<std::optional<ReduceAttributes>> reduce_attributes(NodeContext& ctx, ReduceOp op);

// Cast and CastLike: input 0 cast to `type`, with the node's `saturate` checked.
Status cast_to(NodeContext& ctx, DataType type);

// A constant value owning `array`.
std::shared_ptr<const ConstantValue> owned_constant(HostArray array);

// A constant int64 tensor of the network holding `values` (shape [values.size()]).
Result<Tensor> int64_constant(NodeContext& ctx, const std::vector<int64_t>& values, const std::string& name);

// A scalar constant of the floating type `dtype` holding `value` (rounded to the type).
Result<Tensor> float_scalar(NodeContext& ctx, DataType dtype, double value, const std::string& name);

}  // namespace tensoracle::onnx_import
