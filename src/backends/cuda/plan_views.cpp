#include "backends/cuda/plan_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

namespace {

class ViewFinder {
 public:
  ViewFinder(const Network& net, const std::vector<TensorDesc>& desc, const DeviceInfo& device)
      : net_(net), desc_(desc), device_(device) {
    for (Tensor t : net.outputs()) network_outputs_.insert(t.id);
  }

  std::map<uint32_t, uint32_t> take(std::vector<PlannedStep>& steps, std::vector<std::string>& log) {
    std::map<uint32_t, std::vector<size_t>> readers;
    std::map<uint32_t, size_t> writer;
    for (size_t s = 0; s < steps.size(); ++s) {
      for (const auto* list : {&steps[s].inputs, &steps[s].extra_inputs})
        for (Tensor t : *list)
          if (t.valid()) readers[t.id].push_back(s);
      for (Tensor t : steps[s].outputs) writer[t.id] = s;
    }
    std::map<uint32_t, uint32_t> views;
    std::set<uint32_t> in_arena;
    std::vector<bool> dropped(steps.size(), false);
    size_t reshapes = 0, transposes = 0;
    for (size_t s = 0; s < steps.size(); ++s) {
      PlannedStep& step = steps[s];
      const bool single = step.fused.empty() && step.inputs.size() == 1 && step.outputs.size() == 1 &&
                          step.input_layouts[0] == Layout::kLinear && step.output_layouts[0] == Layout::kLinear &&
                          !network_outputs_.count(step.outputs[0].id);
      const Tensor in = single ? step.inputs[0] : Tensor{}, out = single ? step.outputs[0] : Tensor{};
      bool view = false;
      if (single && in_arena.count(in.id)) {
        const OpKind kind = net_.node(step.anchor).kind;
        if (kind == OpKind::kReshape) view = true, ++reshapes;
        else if (is_head_split(step)) {
          view = read_as_bshd(steps, readers[out.id], out) || written_as_bshd(steps, writer, readers, in, s);
          transposes += view;
        }
      }
      if (view) {
        views[out.id] = in.id;
        in_arena.insert(out.id);
        dropped[s] = true;
        continue;
      }
      for (Tensor t : step.outputs)
        if (!network_outputs_.count(t.id)) in_arena.insert(t.id);
    }
    std::vector<PlannedStep> kept;
    for (size_t s = 0; s < steps.size(); ++s)
      if (!dropped[s]) kept.push_back(std::move(steps[s]));
    steps = std::move(kept);
    if (!views.empty())
      log.push_back(fmt::format("views: {} reshape(s) and {} head transpose(s) share their input's memory (no step)",
                                reshapes, transposes));
    return views;
  }

 private:
  bool is_head_split(const PlannedStep& step) const {
    const Node& node = net_.node(step.anchor);
    const auto* transpose = node.attributes<TransposeAttributes>();
    return transpose && desc_[step.inputs[0].id].shape.rank() == 4 && transpose->perm == std::vector<int64_t>{0, 2, 1, 3};
  }

  // Every reader of `t` takes it only where its families read bshd (FamilyTraits::bshd_inputs),
  // and accepts it so.
  bool read_as_bshd(std::vector<PlannedStep>& steps, const std::vector<size_t>& readers, Tensor t) const {
    if (readers.empty()) return false;
    std::vector<PlannedStep> changed;
    for (size_t r : readers) {
      PlannedStep step = steps[r];
      if (!step.extra_inputs.empty()) return false;
      const std::vector<size_t> bshd = tactic_families().traits(net_.node(step.anchor)).bshd_inputs;
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        if (step.inputs[i] != t) continue;
        if (std::find(bshd.begin(), bshd.end(), i) == bshd.end() || step.input_layouts[i] != Layout::kLinear) return false;
        step.input_layouts[i] = Layout::kBshd;
      }
      if (!some_family_accepts(net_, step, desc_, device_)) return false;
      changed.push_back(std::move(step));
    }
    for (size_t i = 0; i < readers.size(); ++i) steps[readers[i]].input_layouts = changed[i].input_layouts;
    return true;
  }

  // `t` is the only output of a step whose families write bshd (FamilyTraits::bshd_output), read
  // by transpose step `s` alone, and that step accepts writing it so.
  bool written_as_bshd(std::vector<PlannedStep>& steps, const std::map<uint32_t, size_t>& writer,
                       std::map<uint32_t, std::vector<size_t>>& readers, Tensor t, size_t s) const {
    const auto w = writer.find(t.id);
    if (w == writer.end() || readers[t.id] != std::vector<size_t>{s}) return false;
    PlannedStep step = steps[w->second];
    if (!tactic_families().traits(net_.node(step.anchor)).bshd_output || step.outputs.size() != 1 ||
        step.output_layouts[0] != Layout::kLinear || network_outputs_.count(t.id))
      return false;
    step.output_layouts[0] = Layout::kBshd;
    if (!some_family_accepts(net_, step, desc_, device_)) return false;
    steps[w->second].output_layouts[0] = Layout::kBshd;
    return true;
  }

  const Network& net_;
  const std::vector<TensorDesc>& desc_;
  const DeviceInfo& device_;
  std::set<uint32_t> network_outputs_;
};

}  // namespace

std::map<uint32_t, uint32_t> take_views(const Network& net, std::vector<PlannedStep>& steps,
                                        const std::vector<TensorDesc>& desc, const DeviceInfo& device,
                                        std::vector<std::string>& log) {
  return ViewFinder(net, desc, device).take(steps, log);
}

}  // namespace tensoracle::backends::cuda
