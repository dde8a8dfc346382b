#include "passes/constant_values.h"

#include "tensoracle/float_formats.h"

namespace tensoracle::passes {

const Node* constant_producer(const Network& network, Tensor t) {
  const int64_t p = t.valid() ? network.tensor(t).producer : -1;
  return p >= 0 && network.node(static_cast<size_t>(p)).kind == OpKind::kConstant ? &network.node(static_cast<size_t>(p))
                                                                                   : nullptr;
}

std::optional<ConstantValues> constant_values(const Network& network, Tensor t) {
  while (t.valid()) {
    const int64_t producer = network.tensor(t).producer;
    if (producer < 0) return std::nullopt;
    const Node& node = network.node(static_cast<size_t>(producer));
    if (node.kind == OpKind::kCast && is_floating_point(network.tensor(t).desc.dtype) &&
        is_floating_point(network.tensor(node.inputs[0]).desc.dtype)) {
      t = node.inputs[0];
      continue;
    }
    if (node.kind != OpKind::kConstant) return std::nullopt;
    const ArrayView& view = node.constant->view;
    ConstantValues out{view.shape, std::vector<double>(static_cast<size_t>(view.element_count()))};
    convert_elements(view.dtype, view.data, DataType::kFloat64, out.values.data(), out.values.size());
    return out;
  }
  return std::nullopt;
}

}  // namespace tensoracle::passes
