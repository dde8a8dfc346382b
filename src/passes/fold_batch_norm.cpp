// Convolution + inference batch norm -> one convolution (passes.h).
#include <cmath>

#include "core/errors.h"
#include "graph/attributes.h"
#include "passes/constant_values.h"
#include "passes/passes.h"
#include "passes/rebuild.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::passes {

namespace {

// The batch norm that alone reads convolution `conv`'s output, if the pair can fold.
std::optional<size_t> foldable_batch_norm(const Network& net, size_t conv, const std::vector<int>& uses) {
  const Node& node = net.node(conv);
  if (node.kind != OpKind::kConvolution) return std::nullopt;
  const Tensor y = node.outputs[0];
  if (uses[y.id] != 1) return std::nullopt;
  for (size_t i = conv + 1; i < net.num_nodes(); ++i) {
    const Node& bn = net.node(i);
    if (bn.inputs.empty() || bn.inputs[0] != y) continue;
    if (bn.kind != OpKind::kBatchNorm) return std::nullopt;
    if (!constant_values(net, node.inputs[1])) return std::nullopt;
    if (node.inputs.size() > 2 && node.inputs[2].valid() && !constant_values(net, node.inputs[2])) return std::nullopt;
    for (size_t p = 1; p < 5; ++p)
      if (!constant_values(net, bn.inputs[p])) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

Result<HostArray> to_array(DataType type, const Dims& shape, const std::vector<double>& values) {
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(type, shape));
  TO_ASSERT(static_cast<size_t>(array.element_count()) == values.size());
  convert_elements(DataType::kFloat64, values.data(), type, array.data(), values.size());
  return array;
}

}  // namespace

Result<Network> fold_batch_norm(const Network& network) {
  const std::vector<int> uses = consumer_counts(network);
  return rebuild(network, [&](Rebuild& r, size_t index) -> Result<bool> {
    const std::optional<size_t> bn_index = foldable_batch_norm(network, index, uses);
    if (!bn_index) return false;
    const Node& conv = network.node(index);
    const Node& bn = network.node(*bn_index);
    ConstantValues w = *constant_values(network, conv.inputs[1]);
    const int64_t k = w.shape[0];
    std::vector<double> b(static_cast<size_t>(k), 0.0);
    if (conv.inputs.size() > 2 && conv.inputs[2].valid()) b = constant_values(network, conv.inputs[2])->values;
    const std::vector<double> gamma = constant_values(network, bn.inputs[1])->values;
    const std::vector<double> beta = constant_values(network, bn.inputs[2])->values;
    const std::vector<double> mean = constant_values(network, bn.inputs[3])->values;
    const std::vector<double> var = constant_values(network, bn.inputs[4])->values;
    TO_ASSIGN_OR_RETURN(const BatchNormAttributes* bn_attributes, graph::attributes_of<BatchNormAttributes>(bn));
    const double eps = bn_attributes->epsilon;
    if (gamma.size() != static_cast<size_t>(k) || beta.size() != gamma.size() || mean.size() != gamma.size() ||
        var.size() != gamma.size() || b.size() != gamma.size())
      return false;  // inference has checked these; a mismatch here means: leave it alone
    const size_t per_k = w.values.size() / static_cast<size_t>(k);
    for (size_t c = 0; c < static_cast<size_t>(k); ++c) {
      const double s = gamma[c] / std::sqrt(var[c] + eps);
      for (size_t e = 0; e < per_k; ++e) w.values[c * per_k + e] *= s;
      b[c] = (b[c] - mean[c]) * s + beta[c];
    }
    Network& out = r.target();
    const DataType w_type = network.tensor(conv.inputs[1]).desc.dtype;
    const DataType y_type = network.tensor(bn.outputs[0]).desc.dtype;
    TO_ASSIGN_OR_RETURN(HostArray folded_weight, to_array(w_type, w.shape, w.values));
    TO_ASSIGN_OR_RETURN(HostArray folded_bias, to_array(y_type, Dims({k}), b));
    Tensor wt = out.add_constant(std::move(folded_weight), conv.name + ".folded_weight");
    Tensor bt = out.add_constant(std::move(folded_bias), conv.name + ".folded_bias");
    std::vector<Tensor> y = out.add_layer({r.mapped(conv.inputs[0]), wt, bt}, conv.op_attributes);
    TO_RETURN_IF_ERROR(out.status().with_context(fmt::format("folding batch norm '{}' into '{}'", bn.name, conv.name)));
    out.set_tensor_name(y[0], network.tensor(bn.outputs[0]).name);
    r.map(conv.outputs[0], y[0]);
    r.map(bn.outputs[0], y[0]);
    return true;
  });
}

}  // namespace tensoracle::passes
