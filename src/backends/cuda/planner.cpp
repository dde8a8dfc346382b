#include "backends/cuda/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "backends/cuda/device.h"
#include "backends/cuda/step_schedule.h"
#include "backends/cuda/tactic_timer.h"
#include "backends/plan_network.h"
#include "core/errors.h"
#include "graph/liveness.h"
#include "passes/passes.h"

namespace tensoracle::backends::cuda {

namespace {

bool takes_epilogue(OpKind kind) {
  return kind == OpKind::kMatMul || kind == OpKind::kConvolution || kind == OpKind::kDeconvolution;
}

int candidate_limit(int level) { return level <= 0 ? 1 : 1 << std::min(level, 5); }

std::map<std::string, Dims> shapes_at(const std::map<std::string, ShapeRange>& profile, Dims ShapeRange::*point) {
  std::map<std::string, Dims> out;
  for (const auto& [name, range] : profile) out[name] = range.*point;
  return out;
}

// Who reads each tensor (live layers only).
std::vector<std::vector<size_t>> consumers_of(const Network& net, const std::vector<bool>& live) {
  std::vector<std::vector<size_t>> readers(net.num_tensors());
  for (size_t i = 0; i < net.num_nodes(); ++i)
    if (live[i])
      for (Tensor t : net.node(i).inputs)
        if (t.valid() && (readers[t.id].empty() || readers[t.id].back() != i)) readers[t.id].push_back(i);
  return readers;
}

std::string step_label(const Network& net, const PlannedStep& step) {
  std::string label = net.node(step.anchor).name;
  for (size_t n : step.fused)
    if (n != step.anchor) label += "+" + net.node(n).name;
  return label;
}

bool accepted_by_some_family(const Network& net, const PlannedStep& step, const std::vector<TensorDesc>& desc,
                             const DeviceInfo& device) {
  auto inst = instantiate(net, step, desc);
  return inst.is_ok() && !accepting_families(*inst, device, nullptr).empty();
}

class Lowering {
 public:
  Lowering(const Network& net, const std::vector<TensorDesc>& desc, const DeviceInfo& device)
      : net_(net), desc_(desc), device_(device), live_(graph::live_nodes(net)), readers_(consumers_of(net, live_)) {
    for (Tensor t : net.outputs()) is_output_.insert(t.id);
  }

  Result<std::vector<PlannedStep>> run() {
    std::vector<bool> taken(net_.num_nodes(), false);
    std::vector<std::pair<size_t, PlannedStep>> steps;  // (position = last node, step)
    for (size_t i = 0; i < net_.num_nodes(); ++i) {
      const Node& node = net_.node(i);
      if (!live_[i] || taken[i] || node.kind == OpKind::kConstant) continue;
      TO_ASSIGN_OR_RETURN(PlannedStep step, form_step(i, taken));
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

  bool accepted(const PlannedStep& step) const { return accepted_by_some_family(net_, step, desc_, device_); }

  Result<PlannedStep> form_step(size_t anchor, std::vector<bool>& taken) {
    const Node& node = net_.node(anchor);
    PlannedStep step;
    step.anchor = anchor;
    const bool chain = is_pointwise(node.kind);
    if (chain) {
      step.fused.push_back(anchor);
      for (Tensor t : node.inputs) add_unique(step.inputs, t);
    } else {
      step.inputs = node.inputs;
    }
    step.outputs = node.outputs;
    if (chain || takes_epilogue(node.kind)) {
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
        if (!accepted(grown)) break;
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

  static void add_unique(std::vector<Tensor>& list, Tensor t) {
    if (!t.valid() || std::find(list.begin(), list.end(), t) == list.end()) list.push_back(t);
  }

  void set_linear_layouts(PlannedStep& step) const {
    step.input_layouts.assign(step.inputs.size(), Layout::kLinear);
    step.extra_input_layouts.assign(step.extra_inputs.size(), Layout::kLinear);
    step.output_layouts.assign(step.outputs.size(), Layout::kLinear);
  }

  const Network& net_;
  const std::vector<TensorDesc>& desc_;
  const DeviceInfo& device_;
  std::vector<bool> live_;
  std::vector<std::vector<size_t>> readers_;
  std::set<uint32_t> is_output_;
};

void set_step_layouts(PlannedStep& step, const std::vector<bool>& nhwc) {
  auto layout = [&](Tensor t) { return t.valid() && nhwc[t.id] ? Layout::kNhwc : Layout::kLinear; };
  for (size_t i = 0; i < step.inputs.size(); ++i) step.input_layouts[i] = layout(step.inputs[i]);
  for (size_t i = 0; i < step.extra_inputs.size(); ++i) step.extra_input_layouts[i] = layout(step.extra_inputs[i]);
  for (size_t i = 0; i < step.outputs.size(); ++i) step.output_layouts[i] = layout(step.outputs[i]);
}

// Channels-last (NHWC) for the fp16/bf16 image tensors that flow between convolutions and the
// pointwise and pooling steps around them, where tensor-core convolutions want it; every other
// tensor, and every network input and output, stays linear. A pointwise chain reading a linear
// tensor and writing an NHWC one is the reformat, at no extra pass. A step that refuses its
// layouts sends its tensors back to linear (logged).
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
  auto kind = [&](size_t s) { return net.node(steps[s].anchor).kind; };
  auto capable = [&](size_t s) { return kind(s) == OpKind::kConvolution || kind(s) == OpKind::kPooling || is_pointwise(kind(s)); };
  std::vector<bool> nhwc(net.num_tensors(), false);
  std::set<uint32_t> outputs;
  for (Tensor t : net.outputs()) outputs.insert(t.id);
  for (uint32_t t = 0; t < net.num_tensors(); ++t) {
    const TensorDesc& d = desc[t];
    if (d.shape.rank() != 4 || (d.dtype != DataType::kFloat16 && d.dtype != DataType::kBFloat16)) continue;
    if (d.shape[1] == 1 || d.shape[2] * d.shape[3] == 1) continue;  // both layouts are the same bytes
    if (producer[t] < 0 || outputs.count(t) || !capable(static_cast<size_t>(producer[t]))) continue;
    bool all_capable = true, near_conv = kind(static_cast<size_t>(producer[t])) == OpKind::kConvolution;
    for (size_t c : consumers[t]) all_capable &= capable(c), near_conv |= kind(c) == OpKind::kConvolution;
    nhwc[t] = all_capable && near_conv;
  }
  // The constant weight of a channels-last 2-D convolution goes channels-last too ([K, C/G, R, S]
  // stored KRSC): the order tensor-core engines read, reordered once when the engine loads.
  for (uint32_t t = 0; t < net.num_tensors(); ++t) {
    const TensorDesc& d = desc[t];
    const int64_t node = net.tensor(Tensor{t}).producer;
    if (d.shape.rank() != 4 || (d.dtype != DataType::kFloat16 && d.dtype != DataType::kBFloat16)) continue;
    if (node < 0 || net.node(static_cast<size_t>(node)).kind != OpKind::kConstant || outputs.count(t)) continue;
    bool weight_of_nhwc_convs = !consumers[t].empty();
    for (size_t c : consumers[t]) {
      const PlannedStep& step = steps[c];
      weight_of_nhwc_convs &= kind(c) == OpKind::kConvolution && step.inputs.size() > 1 && step.inputs[1].id == t &&
                              step.inputs[0].id != t && nhwc[step.inputs[0].id];
    }
    nhwc[t] = weight_of_nhwc_convs;
  }
  for (int round = 0; round < 4; ++round) {
    bool changed = false;
    for (PlannedStep& step : steps) {
      set_step_layouts(step, nhwc);
      if (accepted_by_some_family(net, step, desc, device)) continue;
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

// Steps that only reinterpret bytes already in the activation arena become views: no step, and
// the memory plan gives the view the viewed tensor's offset. Returns view -> viewed.
//  - A reshape, linear in and out.
//  - A transpose (0, 2, 1, 3) of a rank-4 tensor [B, S, H, D] read only by attention steps that
//    accept it as q, k or v in the bshd layout (the same bytes seen as [B, H, S, D]).
//  - A transpose (0, 2, 1, 3) that alone reads an attention step's output, when that step
//    accepts writing it in bshd (so the transpose's linear output is those very bytes).
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

  // Every reader of `t` is an attention step taking it as q, k or v, and accepts it in bshd.
  bool read_as_bshd(std::vector<PlannedStep>& steps, const std::vector<size_t>& readers, Tensor t) const {
    if (readers.empty()) return false;
    std::vector<PlannedStep> changed;
    for (size_t r : readers) {
      PlannedStep step = steps[r];
      if (net_.node(step.anchor).kind != OpKind::kAttention || !step.extra_inputs.empty()) return false;
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        if (step.inputs[i] != t) continue;
        if (i >= 3 || step.input_layouts[i] != Layout::kLinear) return false;
        step.input_layouts[i] = Layout::kBshd;
      }
      if (!accepted_by_some_family(net_, step, desc_, device_)) return false;
      changed.push_back(std::move(step));
    }
    for (size_t i = 0; i < readers.size(); ++i) steps[readers[i]].input_layouts = changed[i].input_layouts;
    return true;
  }

  // `t` is the only output of an attention step, read by transpose step `s` alone, and that step
  // accepts writing it in bshd.
  bool written_as_bshd(std::vector<PlannedStep>& steps, const std::map<uint32_t, size_t>& writer,
                       std::map<uint32_t, std::vector<size_t>>& readers, Tensor t, size_t s) const {
    const auto w = writer.find(t.id);
    if (w == writer.end() || readers[t.id] != std::vector<size_t>{s}) return false;
    PlannedStep step = steps[w->second];
    if (net_.node(step.anchor).kind != OpKind::kAttention || step.outputs.size() != 1 ||
        step.output_layouts[0] != Layout::kLinear || network_outputs_.count(t.id))
      return false;
    step.output_layouts[0] = Layout::kBshd;
    if (!accepted_by_some_family(net_, step, desc_, device_)) return false;
    steps[w->second].output_layouts[0] = Layout::kBshd;
    return true;
  }

  const Network& net_;
  const std::vector<TensorDesc>& desc_;
  const DeviceInfo& device_;
  std::set<uint32_t> network_outputs_;
};

}  // namespace

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

Result<std::vector<uint64_t>> max_tensor_bytes(const Network& network,
                                               const std::vector<std::map<std::string, ShapeRange>>& profiles) {
  std::vector<uint64_t> bytes(network.num_tensors(), 0);
  for (const auto& profile : profiles) {
    TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> desc, infer_tensor_descs(network, shapes_at(profile, &ShapeRange::max)));
    for (size_t t = 0; t < desc.size(); ++t) {
      if (desc[t].shape.rank() == 0 && !desc[t].shape.is_static()) continue;
      auto b = desc[t].shape.byte_size(desc[t].dtype);
      if (b.is_ok()) bytes[t] = std::max(bytes[t], static_cast<uint64_t>(*b));
    }
  }
  return bytes;
}

Result<CudaPlan> make_cuda_plan(const Network& network, const std::vector<std::map<std::string, ShapeRange>>& profiles,
                                const PlanOptions& options, const StepProgressFn& progress) {
  if (profiles.empty()) return invalid_argument("cuda plan: no optimization profile");
  TO_ASSIGN_OR_RETURN(DeviceInfo device, current_device());
  CudaPlan plan;
  TO_ASSIGN_OR_RETURN(plan.network, passes::optimize_for_inference(network, &plan.log));
  const Network& net = plan.network;
  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> opt, infer_tensor_descs(net, shapes_at(profiles.front(), &ShapeRange::opt)));
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind != OpKind::kConstant && tactic_families().for_kind(node.kind).empty())
      return unsupported("layer '{}': the cuda backend has no implementation of {}", node.name, op_kind_name(node.kind));
  }
  TO_ASSIGN_OR_RETURN(plan.steps, Lowering(net, opt, device).run());
  assign_layouts(net, plan.steps, opt, device, plan.log);
  const std::map<uint32_t, uint32_t> views = ViewFinder(net, opt, device).take(plan.steps, plan.log);

  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> largest, infer_tensor_descs(net, shapes_at(profiles.front(), &ShapeRange::max)));
  TacticTimer timer(options.timing_iterations, options.workspace_limit_bytes);
  TO_RETURN_IF_ERROR(timer.start(device));
  std::vector<uint64_t> step_workspace(plan.steps.size(), 0);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    PlannedStep& step = plan.steps[s];
    TO_ASSIGN_OR_RETURN(StepInstance inst, instantiate(net, step, opt));
    std::vector<std::string> reasons;
    std::vector<const TacticFamily*> families = accepting_families(inst, device, &reasons);
    const std::string label = step_label(net, step);
    if (families.empty())
      return unsupported("layer '{}' ({}): no cuda tactic can implement it: {}", label, op_kind_name(inst.anchor.node.kind),
                         fmt::join(reasons, "; "));
    if (!options.replay.empty() && options.replay.count(inst.anchor.node.name) == 0)
      plan.log.push_back(fmt::format("replay: '{}' is not in the tactic record; timed", label));
    TO_ASSIGN_OR_RETURN(ChosenTactic chosen,
                        timer.choose(inst, families, candidate_limit(options.optimization_level), options.replay, label, plan.log));
    step.family = chosen.family;
    step.tactic = chosen.tactic->name();
    step.choice = chosen.tactic->choice();
    step.time_ms = chosen.median_ms;
    TO_ASSIGN_OR_RETURN(StepInstance at_max, instantiate(net, step, largest));
    step_workspace[s] = chosen.tactic->workspace_size(at_max);
    if (progress)
      progress(s, plan.steps.size(),
               fmt::format("step {}/{} {} ({}): {}{}", s + 1, plan.steps.size(), label, op_kind_name(inst.anchor.node.kind),
                           step.tactic, step.time_ms >= 0 ? fmt::format(" {:.4f} ms", step.time_ms) : std::string()));
  }
  choose_streams(net, plan.steps, options.auxiliary_streams);
  TO_ASSIGN_OR_RETURN(const StepSchedule schedule, schedule_steps(net, plan.steps));
  uint64_t workspace[2] = {0, 0};  // per stream
  for (size_t s = 0; s < plan.steps.size(); ++s)
    workspace[plan.steps[s].stream] = std::max(workspace[plan.steps[s].stream], step_workspace[s]);
  if (workspace[0] + workspace[1] > options.workspace_limit_bytes)
    return invalid_argument("cuda plan: the chosen tactics need {} bytes of workspace, over the limit of {}",
                            workspace[0] + workspace[1], options.workspace_limit_bytes);
  size_t auxiliary = 0;
  for (const PlannedStep& step : plan.steps) auxiliary += step.stream == kAuxiliaryStream;
  if (auxiliary) plan.log.push_back(fmt::format("streams: {} of {} steps run on the auxiliary stream", auxiliary, plan.steps.size()));
  TO_ASSIGN_OR_RETURN(std::vector<uint64_t> bytes, max_tensor_bytes(net, profiles));
  plan.memory = plan_memory(net, plan.steps, bytes, workspace[0], views, schedule.spans, workspace[1]);
  return plan;
}

}  // namespace tensoracle::backends::cuda
