#include "backends/cuda/planned_step.h"

#include <fmt/format.h>

#include <map>

#include "backends/cuda/cuda_tactic.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

std::vector<size_t> PlannedStep::nodes() const {
  std::vector<size_t> out{anchor};
  for (size_t n : fused)
    if (n != anchor) out.push_back(n);
  return out;
}

Result<StepInstance> instantiate(const Network& network, const PlannedStep& step, const std::vector<TensorDesc>& desc) {
  const Node& anchor = network.node(step.anchor);
  const bool chain = is_pointwise(anchor.kind);
  StepInstance inst{NodeInstance{anchor, {}, {}}, step.input_layouts, step.output_layouts, step.extra_input_layouts, {}, {}};
  for (Tensor t : anchor.inputs) inst.anchor.inputs.push_back(t.valid() ? &desc[t.id] : nullptr);
  for (Tensor t : anchor.outputs) inst.anchor.outputs.push_back(desc[t.id]);
  for (Tensor t : step.outputs) inst.outputs.push_back(desc[t.id]);

  if (step.fused.empty()) return inst;
  // Registers of the tensors the program reads or computes.
  std::map<uint32_t, int> reg;
  if (chain) {
    for (Tensor t : step.inputs) {
      reg[t.id] = static_cast<int>(inst.program.inputs.size());
      inst.program.inputs.push_back(desc[t.id]);
    }
  } else {
    reg[anchor.outputs[0].id] = 0;
    inst.program.inputs.push_back(desc[anchor.outputs[0].id]);
    for (Tensor t : step.extra_inputs) {
      reg[t.id] = static_cast<int>(inst.program.inputs.size());
      inst.program.inputs.push_back(desc[t.id]);
    }
  }
  for (size_t n : step.fused) {
    const Node& node = network.node(n);
    std::vector<int> operands;
    for (Tensor t : node.inputs) {
      auto it = reg.find(t.id);
      if (it == reg.end())
        return make_error(StatusCode::kInternal, "cuda plan: layer '{}' of a fused step reads '{}', which the step has no register for",
                          node.name, network.tensor(t).name);
      operands.push_back(it->second);
    }
    TO_ASSIGN_OR_RETURN(int r, append_pointwise_node(inst.program, node, static_cast<int64_t>(n), desc[node.outputs[0].id], operands));
    reg[node.outputs[0].id] = r;
  }
  return inst;
}

std::vector<const TacticFamily*> accepting_families(const StepInstance& step, const DeviceInfo& device,
                                                    std::vector<std::string>* reasons) {
  std::vector<const TacticFamily*> out;
  for (const auto& family : tactic_families().for_kind(step.anchor.node.kind)) {
    Status s = family->can_implement(step, device);
    if (s.is_ok()) out.push_back(family.get());
    else if (reasons) reasons->push_back(fmt::format("{}: {}", family->name(), s.message()));
  }
  return out;
}

bool some_family_accepts(const Network& network, const PlannedStep& step, const std::vector<TensorDesc>& desc,
                         const DeviceInfo& device) {
  auto inst = instantiate(network, step, desc);
  return inst.is_ok() && !accepting_families(*inst, device, nullptr).empty();
}

}  // namespace tensoracle::backends::cuda
