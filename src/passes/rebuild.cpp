#include "passes/rebuild.h"

#include "core/errors.h"
#include "graph/liveness.h"
#include "passes/passes.h"

namespace tensoracle::passes {

Status Rebuild::copy_node(size_t index) {
  const Node& node = source_.node(index);
  std::vector<Tensor> outs;
  if (node.kind == OpKind::kConstant) {
    outs.push_back(target_.add_constant(node.constant->view, node.constant, node.name, node.constant->source));
  } else {
    std::vector<Tensor> inputs;
    for (Tensor t : node.inputs) inputs.push_back(mapped(t));
    outs = target_.add_layer(std::move(inputs), node.op_attributes);
  }
  TO_RETURN_IF_ERROR(target_.status());
  for (size_t o = 0; o < outs.size() && o < node.outputs.size(); ++o) {
    target_.set_tensor_name(outs[o], source_.tensor(node.outputs[o]).name);
    map(node.outputs[o], outs[o]);
  }
  return target_.status();
}

Result<Network> rebuild(const Network& source, const std::function<Result<bool>(Rebuild&, size_t)>& replace,
                        const std::function<DataType(const TensorInfo&)>& input_type) {
  TO_RETURN_IF_ERROR(source.status());
  Rebuild r(source);
  for (Tensor t : source.inputs()) {
    const TensorInfo& info = source.tensor(t);
    r.map(t, r.target().add_input(info.name, input_type ? input_type(info) : info.desc.dtype, info.desc.shape));
  }
  for (size_t i = 0; i < source.num_nodes(); ++i) {
    const Node& node = source.node(i);
    if (!node.outputs.empty() && r.mapped(node.outputs[0]).valid()) continue;
    TO_ASSIGN_OR_RETURN(bool replaced, replace(r, i));
    if (!replaced) TO_RETURN_IF_ERROR(r.copy_node(i));
  }
  for (Tensor t : source.outputs()) r.target().mark_output(r.mapped(t), source.tensor(t).name);
  TO_RETURN_IF_ERROR(r.target().status());
  return std::move(r.target());
}

std::vector<int> consumer_counts(const Network& network) {
  std::vector<int> uses(network.num_tensors(), 0);
  for (size_t i = 0; i < network.num_nodes(); ++i)
    for (Tensor t : network.node(i).inputs)
      if (t.valid()) ++uses[t.id];
  for (Tensor t : network.outputs()) ++uses[t.id];
  return uses;
}

Result<Network> remove_dead_layers(const Network& network) {
  const std::vector<bool> live = graph::live_nodes(network);
  // A dead node is "replaced" by nothing.
  return rebuild(network, [&](Rebuild&, size_t index) -> Result<bool> { return !live[index]; });
}

}  // namespace tensoracle::passes
