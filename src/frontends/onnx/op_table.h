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

// The converters of each family (ops_pointwise.cpp, ops_nn.cpp, ops_shape.cpp).
const std::vector<OpConverter>& pointwise_converters();
const std::vector<OpConverter>& nn_converters();
const std::vector<OpConverter>& shape_converters();

// The converter of `op_type` in the default domain, or nullptr.
ConvertFn find_converter(const std::string& op_type);
// Every supported op type, sorted.
std::vector<std::string> supported_op_types();

// An identity layer: a network output must be a tensor of its own (not a graph input, not
// another output).
Tensor copy_of(Network& net, Tensor t, const std::string& name);

}  // namespace tensoracle::onnx_import
