#include "backends/cuda/planned_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

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
  StepInstance inst{NodeInstance{anchor, {}, {}}, step.input_layouts, step.output_layouts, step.extra_input_layouts, {}, {}, {},
                    &network.plugins()};
  for (Tensor t : anchor.inputs) inst.anchor.inputs.push_back(t.valid() ? &desc[t.id] : nullptr);
  for (Tensor t : anchor.outputs) inst.anchor.outputs.push_back(desc[t.id]);
  for (Tensor t : step.outputs) inst.outputs.push_back(desc[t.id]);

  if (!chain) {
    // A step reads its anchor's inputs, where fused dequantize layers read their quantized input
    // instead, then the fused layers' scales: what lowering made, and what a plan read from an
    // engine file must say (its buffers are bound by this order).
    std::vector<Tensor> expected = anchor.inputs;
    std::vector<Tensor> scales;
    for (size_t n : step.fused) {
      const Node& f = network.node(n);
      if (f.kind != OpKind::kDequantize && f.kind != OpKind::kQuantize) continue;
      if (f.kind == OpKind::kDequantize)
        std::replace(expected.begin(), expected.end(), f.outputs[0], f.inputs[0]);
      scales.push_back(f.inputs[1]);
    }
    for (Tensor t : scales)
      if (std::find(expected.begin(), expected.end(), t) == expected.end()) expected.push_back(t);
    if (expected != step.inputs)
      return corrupt_data("cuda plan: step '{}' lists {} input(s), its layers read {} in another order or other ones",
                          anchor.name, step.inputs.size(), expected.size());
  }
  if (step.fused.empty()) return inst;
  const auto input_index = [&](Tensor t) -> std::optional<size_t> {
    for (size_t i = 0; i < step.inputs.size(); ++i)
      if (step.inputs[i] == t) return i;
    return std::nullopt;
  };
  const auto missing = [&](const Node& node, Tensor t) {
    return make_error(StatusCode::kInternal, "cuda plan: layer '{}' of a fused step reads '{}', which is not a step input",
                      node.name, network.tensor(t).name);
  };
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
  // The quantized value is the anchor's output until the epilogue computes another.
  Tensor last = anchor.outputs[0];
  for (size_t n : step.fused) {
    const Node& node = network.node(n);
    if (!chain && node.kind == OpKind::kDequantize) {
      FusedDequantize dq;
      for (size_t i = 0; i < anchor.inputs.size(); ++i)
        if (anchor.inputs[i] == node.outputs[0]) dq.operand = i;
      if (anchor.inputs.empty() || anchor.inputs[dq.operand] != node.outputs[0])
        return make_error(StatusCode::kInternal, "cuda plan: fused dequantize '{}' produces no input of '{}'", node.name,
                          anchor.name);
      dq.layer = &node;
      dq.data = &desc[node.inputs[0].id];
      dq.scale = &desc[node.inputs[1].id];
      const auto data = input_index(node.inputs[0]), scale = input_index(node.inputs[1]);
      if (!data) return missing(node, node.inputs[0]);
      if (!scale) return missing(node, node.inputs[1]);
      dq.data_input = *data;
      dq.scale_input = *scale;
      const auto is_constant = [&network](Tensor t) {
        const int64_t producer = network.tensor(t).producer;
        return producer >= 0 && network.node(static_cast<size_t>(producer)).kind == OpKind::kConstant;
      };
      dq.constant = is_constant(node.inputs[0]) && is_constant(node.inputs[1]);
      inst.quantization.dequantized.push_back(dq);
      continue;
    }
    if (!chain && node.kind == OpKind::kQuantize) {
      const auto scale = input_index(node.inputs[1]);
      if (!scale) return missing(node, node.inputs[1]);
      if (step.outputs.size() == 2 && step.outputs[1] == node.outputs[0]) {  // a quantized copy
        if (node.inputs[0] != anchor.outputs[0] || step.outputs[0] != anchor.outputs[0] || step.fused.size() != 1)
          return corrupt_data("cuda plan: step '{}' writes quantize '{}' as a copy of its output, which it is not",
                              anchor.name, node.name);
        inst.quantization.copy = FusedQuantize{&node, &desc[node.inputs[1].id], *scale, desc[last.id]};
        continue;
      }
      if (node.inputs[0] != last) return missing(node, node.inputs[0]);
      inst.quantization.requantize = FusedQuantize{&node, &desc[node.inputs[1].id], *scale, desc[last.id]};
      continue;
    }
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
    last = node.outputs[0];
  }
  if (inst.computes_quantization())
    for (Tensor t : step.inputs) inst.quantization.inputs.push_back(t.valid() ? &desc[t.id] : nullptr);
  std::sort(inst.quantization.dequantized.begin(), inst.quantization.dequantized.end(),
            [](const FusedDequantize& a, const FusedDequantize& b) { return a.operand < b.operand; });
  return inst;
}

std::vector<const TacticFamily*> accepting_families(const StepInstance& step, const DeviceInfo& device,
                                                    std::vector<std::string>* reasons) {
  std::vector<const TacticFamily*> out;
  for (const auto& family : tactic_families().for_kind(step.anchor.node.kind)) {
    if (!family->traits(step.anchor.node).covers_quantization_of(step)) {
      if (reasons) reasons->push_back(fmt::format("{}: computes no quantize/dequantize layers", family->name()));
      continue;
    }
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
