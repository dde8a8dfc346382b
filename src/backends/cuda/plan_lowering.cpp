#include "backends/cuda/plan_lowering.h"

#include <algorithm>
#include <optional>
#include <set>

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

  std::vector<PlannedStep> run() {
    std::vector<bool> taken(net_.num_nodes(), false);
    std::vector<std::pair<size_t, PlannedStep>> steps;  // (position = last node, step)
    for (size_t i = 0; i < net_.num_nodes(); ++i) {
      const Node& node = net_.node(i);
      if (!live_[i] || taken[i] || node.kind == OpKind::kConstant) continue;
      PlannedStep step = form_step(i, taken);
      size_t last = i;
      for (size_t n : step.fused) last = std::max(last, n);
      steps.emplace_back(last, std::move(step));
    }
    std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<PlannedStep> out;
    for (auto& [position, step] : steps) out.push_back(std::move(step));
    return out;
  }

 private:
  // The single pointwise layer that alone reads `t`, if the chain may continue through it.
  std::optional<size_t> chain_successor(Tensor t, const std::vector<bool>& taken) const {
    if (is_output_.count(t.id) || readers_[t.id].size() != 1) return std::nullopt;
    const size_t c = readers_[t.id][0];
    const Node& node = net_.node(c);
    if (taken[c] || !is_pointwise(node.kind) || node.outputs.size() != 1) return std::nullopt;
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
    if (tactic_families().traits(node).epilogue) {
      Tensor current = node.outputs[0];
      while (auto next = chain_successor(current, taken)) {
        PlannedStep grown = step;
        const Node& c = net_.node(*next);
        grown.fused.push_back(*next);
        for (Tensor t : c.inputs) {
          if (t == current || produced_inside(grown, t)) continue;
          add_unique(chain ? grown.inputs : grown.extra_inputs, t);
        }
        grown.outputs = c.outputs;
        set_linear_layouts(grown);
        if (!some_family_accepts(net_, grown, desc_, device_)) break;
        step = std::move(grown);
        current = c.outputs[0];
      }
    }
    set_linear_layouts(step);
    for (size_t n : step.nodes()) taken[n] = true;
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

std::vector<PlannedStep> lower_to_steps(const Network& net, const std::vector<TensorDesc>& desc,
                                    const DeviceInfo& device) {
  return Lowering(net, desc, device).run();
}

}  // namespace tensoracle::backends::cuda
