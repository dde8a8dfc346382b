// The converter table (op_table.h).
#include "frontends/onnx/op_table.h"

#include "tensoracle/onnx.h"

#include <algorithm>
#include <map>

namespace tensoracle::onnx_import {
namespace {

const std::map<std::string, ConvertFn>& table() {
  static const std::map<std::string, ConvertFn> converters = [] {
    std::map<std::string, ConvertFn> out;
    for (const auto* family : {&pointwise_converters(), &nn_converters(), &shape_converters()})
      for (const OpConverter& c : *family) out.emplace(c.op_type, c.convert);
    return out;
  }();
  return converters;
}

}  // namespace

ConvertFn find_converter(const std::string& op_type) {
  const auto it = table().find(op_type);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : table()) out.push_back(name);
  return out;
}

Tensor copy_of(Network& net, Tensor t, const std::string& name) {
  // A reshape whose every dim copies the input's (0) is the identity.
  const size_t rank = net.tensor(t).desc.shape.rank();
  return net.reshape(t, ReshapeAttributes().set_shape(std::vector<int64_t>(rank, 0)).set_name(name));
}

}  // namespace tensoracle::onnx_import

namespace tensoracle {

std::vector<std::string> onnx_supported_ops() { return onnx_import::supported_op_types(); }

}  // namespace tensoracle
