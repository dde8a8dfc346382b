#include "backends/cuda/plan_lowering.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "backends/cuda/cuda_tactic.h"
#include "graph/liveness.h"

namespace tensoracle::backends::cuda {

namespace {

// Who reads each tensor (live layers only).
std::vector<std::vector<size_t>> consumers_of(const Network& net, const std::vector<bool>& live) {
  std::vector<std::vector<size_t>> readers(net.num_tensors());
  for (size_t i = 0; i < net.num_nodes(); ++i)
    if (live[i])
      for (Tensor t : net.node(i).inputs)
        if (t.valid() && (readers[t.id].empty() || readers[t.id].back() != i)) readers[t.id].push_back(i);
  return readers;
}

void add_unique(std::vector<Tensor>& list, Tensor t) {
  if (!t.valid() || std::find(list.begin(), list.end(), t) == list.end()) list.push_back(t);
}

void set_linear_layouts(PlannedStep& step) {
  step.input_layouts.assign(step.inputs.size(), Layout::kLinear);
  step.extra_input_layouts.assign(step.extra_inputs.size(), Layout::kLinear);
  step.output_layouts.assign(step.outputs.size(), Layout::kLinear);
}

class Lowering {
 public:
  Lowering(const Network& net, const std::vector<TensorDesc>& desc, const DeviceInfo& device)
      : net_(net), desc_(desc), device_(device), live_(graph::live_nodes(net)), readers_(consumers_of(net, live_)) {
    for (Tensor t : net.outputs()) is_output_.insert(t.id);
  }

  std::vector<PlannedStep> run(std::vector<std::string>* log) {
    std::vector<bool> taken(net_.num_nodes(), false);
    std::vector<std::pair<size_t, PlannedStep>> steps;  // (position = last node, step)
    const auto add_step = [&](PlannedStep step) {
      for (size_t n : step.nodes()) taken[n] = true;
      const size_t position = position_of(step);
      steps.emplace_back(position, std::move(step));
    };
    // Q/DQ fusion first: the dequantize layers come before the product that takes them.
    for (size_t i = 0; i < net_.num_nodes(); ++i)
      if (live_[i] && !taken[i])
        if (auto step = form_quantized_step(i, taken, log)) add_step(std::move(*step));
    for (size_t i = 0; i < net_.num_nodes(); ++i) {
      const Node& node = net_.node(i);
      if (!live_[i] || taken[i] || node.kind == OpKind::kConstant) continue;
      add_step(form_step(i, taken));
    }
    std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<PlannedStep> out;
    for (auto& [position, step] : steps) out.push_back(std::move(step));
    return out;
  }

 private:
  // The single pointwise layer that alone reads `t`, if the chain may continue through it. A
  // pointwise step (`chain`) may also end with a quantize layer: its program then writes the
  // quantized tensor, never the value before it (pointwise_program.h, kQuantize). Other steps
  // take a quantize only as a fused Q/DQ step's requantize (form_quantized_step).
  std::optional<size_t> chain_successor(Tensor t, bool chain, const std::vector<bool>& taken) const {
    if (is_output_.count(t.id) || readers_[t.id].size() != 1) return std::nullopt;
    const size_t c = readers_[t.id][0];
    const Node& node = net_.node(c);
    const bool joins = is_pointwise(node.kind) || (chain && node.kind == OpKind::kQuantize && node.inputs[0] == t);
    if (taken[c] || !joins || node.outputs.size() != 1) return std::nullopt;
    size_t reads = 0;  // add(x, x) reads t twice: still one reader
    for (Tensor in : node.inputs) reads += in == t;
    return reads >= 1 ? std::optional<size_t>(c) : std::nullopt;
  }

  PlannedStep form_step(size_t anchor, std::vector<bool>& taken) const {
    const Node& node = net_.node(anchor);
    PlannedStep step;
    step.anchor = anchor;
    const bool chain = is_pointwise(node.kind);  // the step is a pointwise program (step.h)
    if (chain) {
      step.fused.push_back(anchor);
      for (Tensor t : node.inputs) add_unique(step.inputs, t);
    } else {
      step.inputs = node.inputs;
    }
    step.outputs = node.outputs;
    set_linear_layouts(step);
    const FamilyTraits traits = tactic_families().traits(node);
    if (traits.epilogue) grow_epilogue(step, chain, taken);
    if (traits.quantized_copy) add_quantized_copy(step, taken);
    return step;
  }

  // Where a step goes in node order: after its last layer, so that every tensor its layers read
  // exists; a quantized copy reads only the anchor's output and a scale that exists before the
  // anchor (add_quantized_copy), so the step keeps the anchor's place, ahead of the output's
  // other readers.
  size_t position_of(const PlannedStep& step) const {
    size_t last = step.anchor;
    for (size_t n : step.fused)
      if (!(step.outputs.size() == 2 && step.outputs[1] == net_.node(n).outputs[0])) last = std::max(last, n);
    return last;
  }

  // A layer that writes a quantized copy (FamilyTraits::quantized_copy) takes a per-tensor
  // quantize of its output that other layers read too, when a family accepts the step: the
  // output is then read once, not again by a quantize step of its own.
  void add_quantized_copy(PlannedStep& step, const std::vector<bool>& taken) const {
    if (!step.fused.empty() || step.outputs.size() != 1) return;
    const Tensor out = step.outputs[0];
    for (size_t q : readers_[out.id]) {
      const Node& quantize = net_.node(q);
      if (taken[q] || quantize.kind != OpKind::kQuantize || quantize.inputs.size() != 2 || quantize.inputs[0] != out ||
          !exists_before(quantize.inputs[1], step.anchor))
        continue;
      PlannedStep grown = step;
      grown.fused.push_back(q);
      add_unique(grown.inputs, quantize.inputs[1]);
      grown.outputs.push_back(quantize.outputs[0]);
      set_linear_layouts(grown);
      if (some_family_accepts(net_, grown, desc_, device_)) {
        step = std::move(grown);
        return;
      }
    }
  }

  // Whether `t` exists before node `n` runs: a network input, a constant, or an earlier layer's.
  bool exists_before(Tensor t, size_t n) const {
    const int64_t p = net_.tensor(t).producer;
    return p < 0 || static_cast<size_t>(p) < n || net_.node(static_cast<size_t>(p)).kind == OpKind::kConstant;
  }

  // Absorbs the pointwise layers that alone read the step's output while some family accepts the
  // grown step; returns the tensor the step then writes.
  // `log` (Q/DQ-fused steps): where a following layer is not taken, the line says why, since the
  // family then runs it as its own step for a reason of its own (qmatmul_plan.h).
  Tensor grow_epilogue(PlannedStep& step, bool chain, const std::vector<bool>& taken,
                       std::vector<std::string>* log = nullptr) const {
    Tensor current = step.outputs[0];
    while (auto next = chain_successor(current, chain, taken)) {
      PlannedStep grown = step;
      const Node& c = net_.node(*next);
      grown.fused.push_back(*next);
      for (Tensor t : c.inputs) {
        if (t == current || produced_inside(grown, t)) continue;
        add_unique(chain ? grown.inputs : grown.extra_inputs, t);
      }
      grown.outputs = c.outputs;
      set_linear_layouts(grown);
      if (!some_family_accepts(net_, grown, desc_, device_)) {
        if (log)
          log->push_back(fmt::format("{}: {} '{}' not fused into the Q/DQ step: {}", net_.node(step.anchor).name,
                                     op_kind_name(c.kind), c.name, quantize_refusal(grown)));
        break;
      }
      step = std::move(grown);
      current = c.outputs[0];
    }
    return current;
  }

  // Why no family that fuses quantization takes `step` ("" when one does).
  std::string quantize_refusal(const PlannedStep& step) const {
    auto inst = instantiate(net_, step, desc_);
    if (!inst.is_ok()) return inst.status().message();
    std::vector<std::string> reasons;
    for (const auto& family : tactic_families().for_kind(net_.node(step.anchor).kind)) {
      if (!family->traits(net_.node(step.anchor)).quantize_fusion) continue;
      const Status s = family->can_implement(*inst, device_);
      if (s.is_ok()) return "";
      reasons.push_back(fmt::format("{}: {}", family->name(), s.message()));
    }
    return reasons.empty() ? "no cuda family fuses quantize/dequantize into " + std::string(op_kind_name(net_.node(step.anchor).kind))
                           : fmt::format("{}", fmt::join(reasons, "; "));
  }

  // Q/DQ fusion (FamilyTraits::quantize_fusion): a layer whose operands are dequantized takes the
  // dequantize layers that alone produce them, then its epilogue, then a quantize layer that
  // alone reads the result, while a family that fuses quantization accepts the step. Where none
  // does, nothing is taken (each layer becomes a step of its own, the Q/DQ semantics run
  // explicitly) and the log names the layer and why.
  std::optional<PlannedStep> form_quantized_step(size_t anchor, const std::vector<bool>& taken,
                                                 std::vector<std::string>* log) const {
    const Node& node = net_.node(anchor);
    // Matrix products and convolutions: the layers a quantized kernel could take.
    if (node.kind == OpKind::kConstant || is_pointwise(node.kind) || !tactic_families().traits(node).epilogue)
      return std::nullopt;
    std::vector<size_t> dequantizers;
    for (Tensor t : node.inputs) {
      const int64_t p = t.valid() ? net_.tensor(t).producer : -1;
      if (p >= 0 && net_.node(static_cast<size_t>(p)).kind == OpKind::kDequantize &&
          std::find(dequantizers.begin(), dequantizers.end(), static_cast<size_t>(p)) == dequantizers.end())
        dequantizers.push_back(static_cast<size_t>(p));
    }
    if (dequantizers.empty()) return std::nullopt;
    const auto kept_explicit = [&](const std::string& why) -> std::optional<PlannedStep> {
      if (log) log->push_back(fmt::format("{}: Q/DQ kept explicit: {}", node.name, why));
      return std::nullopt;
    };
    if (!tactic_families().traits(node).quantize_fusion)
      return kept_explicit(fmt::format("no cuda family fuses quantize/dequantize into {} yet", op_kind_name(node.kind)));
    PlannedStep step;
    step.anchor = anchor;
    step.inputs = node.inputs;
    std::vector<Tensor> scales;
    for (size_t dq : dequantizers) {
      const Node& d = net_.node(dq);
      const Tensor out = d.outputs[0];
      if (taken[dq] || is_output_.count(out.id) || readers_[out.id].size() != 1)
        return kept_explicit(fmt::format("the output of dequantize '{}' is also read elsewhere{}", d.name,
                                         is_output_.count(out.id) ? " (a network output)" : ""));
      step.fused.push_back(dq);
      for (Tensor& t : step.inputs)
        if (t == out) t = d.inputs[0];
      scales.push_back(d.inputs[1]);
    }
    for (Tensor t : scales) add_unique(step.inputs, t);
    step.outputs = node.outputs;
    set_linear_layouts(step);
    if (const std::string why = quantize_refusal(step); !why.empty()) return kept_explicit(why);
    const Tensor result = grow_epilogue(step, /*chain=*/false, taken, log);
    if (is_output_.count(result.id) == 0 && readers_[result.id].size() == 1) {
      const size_t q = readers_[result.id][0];
      const Node& quantize = net_.node(q);
      if (!taken[q] && quantize.kind == OpKind::kQuantize && quantize.inputs[0] == result) {
        PlannedStep grown = step;
        grown.fused.push_back(q);
        add_unique(grown.inputs, quantize.inputs[1]);
        grown.outputs = quantize.outputs;
        set_linear_layouts(grown);
        if (const std::string why = quantize_refusal(grown); why.empty())
          step = std::move(grown);
        else if (log)
          log->push_back(fmt::format("{}: quantize '{}' kept explicit: {}", node.name, quantize.name, why));
      }
    }
    return step;
  }

  bool produced_inside(const PlannedStep& step, Tensor t) const {
    const int64_t p = net_.tensor(t).producer;
    if (p < 0) return false;
    if (static_cast<size_t>(p) == step.anchor) return true;
    return std::find(step.fused.begin(), step.fused.end(), static_cast<size_t>(p)) != step.fused.end();
  }

  const Network& net_;
  const std::vector<TensorDesc>& desc_;
  const DeviceInfo& device_;
  std::vector<bool> live_;
  std::vector<std::vector<size_t>> readers_;
  std::set<uint32_t> is_output_;
};

}  // namespace

std::vector<PlannedStep> lower_to_steps(const Network& net, const std::vector<TensorDesc>& desc, const DeviceInfo& device,
                                        std::vector<std::string>* log) {
  return Lowering(net, desc, device).run(log);
}

}  // namespace tensoracle::backends::cuda
