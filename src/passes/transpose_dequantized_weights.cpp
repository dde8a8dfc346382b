// matmul(DQ(x), DQ(w constant [K, N])) -> matmul(DQ(x), DQ(w^T constant [N, K]), transpose_b) (passes.h).
#include <cstring>

#include "core/errors.h"
#include "graph/attributes.h"
#include "passes/passes.h"
#include "passes/rebuild.h"

namespace tensoracle::passes {

namespace {

bool is_dequantize_output(const Network& net, Tensor t) {
  const int64_t p = t.valid() ? net.tensor(t).producer : -1;
  return p >= 0 && net.node(static_cast<size_t>(p)).kind == OpKind::kDequantize;
}

// The dequantize layer of a weight that matmul `index` should read transposed, if any.
std::optional<size_t> weight_to_transpose(const Network& net, size_t index, const std::vector<int>& uses) {
  const Node& mm = net.node(index);
  const MatMulAttributes* attrs = mm.attributes<MatMulAttributes>();
  if (mm.kind != OpKind::kMatMul || attrs == nullptr || attrs->transpose_b || mm.inputs.size() != 2) return std::nullopt;
  if (!is_dequantize_output(net, mm.inputs[0]) || !is_dequantize_output(net, mm.inputs[1])) return std::nullopt;
  const Tensor w = mm.inputs[1];
  if (w == mm.inputs[0] || uses[w.id] != 1 || net.tensor(w).desc.shape.rank() != 2) return std::nullopt;
  const size_t dq = static_cast<size_t>(net.tensor(w).producer);
  const Tensor data = net.node(dq).inputs[0];
  const int64_t constant = net.tensor(data).producer;
  if (constant < 0 || net.node(static_cast<size_t>(constant)).kind != OpKind::kConstant || uses[data.id] != 1)
    return std::nullopt;
  return dq;
}

Result<HostArray> transposed(const ArrayView& view) {
  const int64_t rows = view.shape[0], cols = view.shape[1];
  TO_ASSIGN_OR_RETURN(HostArray out, HostArray::zeros(view.dtype, Dims({cols, rows})));
  const size_t element = data_type_size(view.dtype);
  const auto* from = static_cast<const unsigned char*>(view.data);
  auto* to = static_cast<unsigned char*>(out.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(to + static_cast<size_t>(c * rows + r) * element, from + static_cast<size_t>(r * cols + c) * element, element);
  return out;
}

}  // namespace

Result<Network> transpose_dequantized_weights(const Network& network) {
  const std::vector<int> uses = consumer_counts(network);
  std::vector<bool> transposes(network.num_nodes(), false);  // dequantize layers that now write w^T
  for (size_t i = 0; i < network.num_nodes(); ++i)
    if (auto dq = weight_to_transpose(network, i, uses)) transposes[*dq] = true;
  return rebuild(network, [&](Rebuild& r, size_t index) -> Result<bool> {
    const Node& node = network.node(index);
    Network& out = r.target();
    if (transposes[index]) {
      const Node& constant = network.node(static_cast<size_t>(network.tensor(node.inputs[0]).producer));
      TO_ASSIGN_OR_RETURN(HostArray weight, transposed(constant.constant->view));
      const Tensor wt = out.add_constant(std::move(weight), constant.name + ".transposed");
      TO_ASSIGN_OR_RETURN(const DequantizeAttributes* dq, graph::attributes_of<DequantizeAttributes>(node));
      DequantizeAttributes attrs = *dq;
      const Dims& scale = network.tensor(node.inputs[1]).desc.shape;
      if (scale.rank() == 1 && scale[0] != 1) {  // per-channel: the axis moves with its dim
        TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(node, dq->axis, 2));
        attrs.axis = 1 - axis;
      }
      std::vector<Tensor> y = out.add_layer({wt, r.mapped(node.inputs[1])}, attrs);
      TO_RETURN_IF_ERROR(out.status().with_context(fmt::format("transposing the weight of dequantize '{}'", node.name)));
      out.set_tensor_name(y[0], network.tensor(node.outputs[0]).name);
      r.map(node.outputs[0], y[0]);
      return true;
    }
    if (node.kind != OpKind::kMatMul || node.inputs.size() != 2) return false;
    const int64_t b_producer = network.tensor(node.inputs[1]).producer;
    if (b_producer < 0 || !transposes[static_cast<size_t>(b_producer)]) return false;
    MatMulAttributes attrs = *node.attributes<MatMulAttributes>();
    attrs.transpose_b = true;
    std::vector<Tensor> y = out.add_layer({r.mapped(node.inputs[0]), r.mapped(node.inputs[1])}, attrs);
    TO_RETURN_IF_ERROR(out.status().with_context(fmt::format("reading the weight of '{}' transposed", node.name)));
    out.set_tensor_name(y[0], network.tensor(node.outputs[0]).name);
    r.map(node.outputs[0], y[0]);
    return true;
  });
}

}  // namespace tensoracle::passes
