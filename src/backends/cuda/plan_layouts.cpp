#include "backends/cuda/plan_layouts.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

namespace {

void set_step_layouts(PlannedStep& step, const std::vector<bool>& nhwc) {
  auto layout = [&](Tensor t) { return t.valid() && nhwc[t.id] ? Layout::kNhwc : Layout::kLinear; };
  for (size_t i = 0; i < step.inputs.size(); ++i) step.input_layouts[i] = layout(step.inputs[i]);
  for (size_t i = 0; i < step.extra_inputs.size(); ++i) step.extra_input_layouts[i] = layout(step.extra_inputs[i]);
  for (size_t i = 0; i < step.outputs.size(); ++i) step.output_layouts[i] = layout(step.outputs[i]);
}

// A rank-4 tensor channels-last can help: fp16/bf16 (tensor-core convolutions) and int8/fp8 e4m3
// (cuDNN's quantized convolutions read channels-last operands only: qconv_plan.h packs linear ones
// on every run, and writes its quantized output channels-last without a strided pass).
bool channels_last_candidate(const TensorDesc& d) {
  if (d.shape.rank() != 4) return false;
  return d.dtype == DataType::kFloat16 || d.dtype == DataType::kBFloat16 || d.dtype == DataType::kInt8 ||
         d.dtype == DataType::kFloat8E4M3;
}

}  // namespace

void assign_layouts(const Network& net, std::vector<PlannedStep>& steps, const std::vector<TensorDesc>& desc,
                    const DeviceInfo& device, std::vector<std::string>& log) {
  std::vector<int64_t> producer(net.num_tensors(), -1);
  std::vector<std::vector<size_t>> consumers(net.num_tensors());
  for (size_t s = 0; s < steps.size(); ++s) {
    for (Tensor t : steps[s].outputs) producer[t.id] = static_cast<int64_t>(s);
    for (const auto* list : {&steps[s].inputs, &steps[s].extra_inputs})
      for (Tensor t : *list)
        if (t.valid()) consumers[t.id].push_back(s);
  }
  std::vector<FamilyTraits> traits;
  for (const PlannedStep& step : steps) traits.push_back(tactic_families().traits(net.node(step.anchor)));
  std::vector<bool> nhwc(net.num_tensors(), false);
  std::set<uint32_t> outputs;
  for (Tensor t : net.outputs()) outputs.insert(t.id);
  for (uint32_t t = 0; t < net.num_tensors(); ++t) {
    const TensorDesc& d = desc[t];
    if (!channels_last_candidate(d)) continue;
    if (d.shape[1] == 1 || d.shape[2] * d.shape[3] == 1) continue;  // both layouts are the same bytes
    if (producer[t] < 0 || outputs.count(t) || !traits[static_cast<size_t>(producer[t])].nhwc) continue;
    bool all_take = true, preferred = traits[static_cast<size_t>(producer[t])].prefers_nhwc;
    for (size_t c : consumers[t]) all_take &= traits[c].nhwc, preferred |= traits[c].prefers_nhwc;
    nhwc[t] = all_take && preferred;
  }
  for (uint32_t t = 0; t < net.num_tensors(); ++t) {
    const int64_t node = net.tensor(Tensor{t}).producer;
    if (!channels_last_candidate(desc[t])) continue;
    if (node < 0 || net.node(static_cast<size_t>(node)).kind != OpKind::kConstant || outputs.count(t)) continue;
    bool weight_of_nhwc_steps = !consumers[t].empty();
    for (size_t c : consumers[t]) {
      const PlannedStep& step = steps[c];
      const std::vector<size_t>& weights = traits[c].nhwc_constant_inputs;
      const bool as_weight = std::any_of(weights.begin(), weights.end(), [&](size_t i) {
        return i < step.inputs.size() && step.inputs[i].id == t;
      });
      weight_of_nhwc_steps &= as_weight && step.inputs[0].id != t && nhwc[step.inputs[0].id];
    }
    nhwc[t] = weight_of_nhwc_steps;
  }
  // Channels-last passes on through a step that takes it and reads it already (a pool, a
  // quantize): mixed, such a step reads one layout and writes the other with a strided kernel.
  // Kept only where every step that touches the tensor accepts the layouts.
  const auto accepted = [&](size_t s) {
    set_step_layouts(steps[s], nhwc);
    return some_family_accepts(net, steps[s], desc, device);
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (uint32_t t = 0; t < net.num_tensors(); ++t) {
      const TensorDesc& d = desc[t];
      if (nhwc[t] || !channels_last_candidate(d) || d.shape[1] == 1 || d.shape[2] * d.shape[3] == 1) continue;
      if (producer[t] < 0 || outputs.count(t)) continue;
      const size_t p = static_cast<size_t>(producer[t]);
      const std::vector<Tensor>& in = steps[p].inputs;
      if (!traits[p].nhwc || in.empty() || !in[0].valid() || !nhwc[in[0].id]) continue;
      bool all_take = true;
      for (size_t c : consumers[t]) all_take &= traits[c].nhwc;
      if (!all_take) continue;
      nhwc[t] = true;
      bool kept = accepted(p);
      for (size_t c : consumers[t]) kept = kept && accepted(c);
      nhwc[t] = kept;
      grew |= kept;
    }
  }
  for (int round = 0; round < 4; ++round) {
    bool changed = false;
    for (PlannedStep& step : steps) {
      set_step_layouts(step, nhwc);
      if (some_family_accepts(net, step, desc, device)) continue;
      bool reverted = false;
      for (const auto* list : {&step.inputs, &step.extra_inputs, &step.outputs})
        for (Tensor t : *list)
          if (t.valid() && nhwc[t.id]) nhwc[t.id] = false, reverted = true;
      changed |= reverted;
      if (reverted) log.push_back(fmt::format("layouts: '{}' refuses nhwc tensors; they stay linear", net.node(step.anchor).name));
    }
    if (!changed) break;
  }
  size_t count = 0;
  for (PlannedStep& step : steps) set_step_layouts(step, nhwc);
  for (bool b : nhwc) count += b;
  if (count) log.push_back(fmt::format("layouts: {} tensor(s) channels-last (nhwc)", count));
}

}  // namespace tensoracle::backends::cuda
