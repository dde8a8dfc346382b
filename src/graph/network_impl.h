// Network's private state, shared by network.cpp and the per-op files that define the layer
// methods (ops/*.cpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tensoracle/network.h"

namespace tensoracle {

struct Network::Impl {
  std::vector<Node> nodes;
  std::vector<TensorInfo> tensors;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::map<std::string, uint32_t> tensor_by_name;
  std::map<std::string, size_t> node_by_name;
  std::map<OpKind, int> generated_names;
  std::map<std::string, Tensor> weight_tensors;  // Weights tensor name -> constant
  PluginRegistry plugins;                         // what plugin layers resolve through
  Status status;

  void fail(Status error);  // keeps the first error
  std::string unique_tensor_name(const std::string& base);
  std::string generated_name(OpKind kind);  // "<op>_<n>", unused by any layer
  Tensor new_tensor(std::string name, TensorDesc desc, int64_t producer, int output_index);
  bool owns(Tensor t) const;
  bool any_invalid(const std::vector<Tensor>& tensors_in) const;

  // What every layer method does: required inputs must be valid (an invalid one after an
  // earlier error returns quietly), optional ones may be invalid. The op kind is the attribute
  // struct's, the layer name its `name`.
  std::vector<Tensor> layer(std::vector<Tensor> required, std::vector<Tensor> optional, OpAttributes attrs);
  // Defines the node: checks the inputs and the name, resolves the op's dependent defaults,
  // infers the outputs and stores the node.
  std::vector<Tensor> add(std::vector<Tensor> inputs, OpAttributes attributes);
  static Tensor single(std::vector<Tensor> outputs);
};

}  // namespace tensoracle
