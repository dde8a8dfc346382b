#include "backends/cuda/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "backends/plan_network.h"

namespace tensoracle::backends::cuda {

namespace {

uint64_t align_up(uint64_t v) { return (v + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

struct Interval {
  size_t first = SIZE_MAX, last = 0;  // step indices: written at `first`, last read at `last`
};

}  // namespace

std::map<std::string, Dims> profile_shapes(const OptimizationProfile& profile, Dims ShapeRange::*point) {
  std::map<std::string, Dims> out;
  for (const auto& [name, range] : profile) out[name] = range.*point;
  return out;
}

Result<std::vector<uint64_t>> max_tensor_bytes(const Network& network, const std::vector<OptimizationProfile>& profiles) {
  std::vector<uint64_t> bytes(network.num_tensors(), 0);
  for (const auto& profile : profiles) {
    TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> desc, infer_tensor_descs(network, profile_shapes(profile, &ShapeRange::max)));
    for (size_t t = 0; t < desc.size(); ++t) {
      if (desc[t].shape.rank() == 0 && !desc[t].shape.is_static()) continue;
      auto b = desc[t].shape.byte_size(desc[t].dtype);
      if (b.is_ok()) bytes[t] = std::max(bytes[t], static_cast<uint64_t>(*b));
    }
  }
  return bytes;
}

Result<std::vector<std::vector<TensorDesc>>> descs_at_corners(const Network& network,
                                                              const std::vector<OptimizationProfile>& profiles) {
  std::vector<std::vector<TensorDesc>> out;
  for (const auto& profile : profiles)
    for (const auto corner : {&ShapeRange::min, &ShapeRange::opt, &ShapeRange::max}) {
      TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> desc, infer_tensor_descs(network, profile_shapes(profile, corner)));
      out.push_back(std::move(desc));
    }
  return out;
}

Result<uint64_t> largest_workspace(const CudaTactic& tactic, const Network& network, const PlannedStep& step,
                                   const std::vector<std::vector<TensorDesc>>& descs) {
  uint64_t bytes = 0;
  for (const std::vector<TensorDesc>& desc : descs) {
    TO_ASSIGN_OR_RETURN(const StepInstance at, instantiate(network, step, desc));
    bytes = std::max<uint64_t>(bytes, tactic.workspace_size(at));
  }
  return bytes;
}

StreamWorkspaces stream_workspaces(const std::vector<PlannedStep>& steps, const std::vector<uint64_t>& step_bytes) {
  StreamWorkspaces out;
  for (size_t s = 0; s < steps.size() && s < step_bytes.size(); ++s) {
    uint64_t& stream = steps[s].stream == kAuxiliaryStream ? out.auxiliary : out.main;
    stream = std::max(stream, step_bytes[s]);
  }
  return out;
}

MemoryPlan plan_memory(const Network& network, const std::vector<PlannedStep>& steps, const std::vector<uint64_t>& max_bytes,
                       uint64_t workspace_bytes, const std::map<uint32_t, uint32_t>& views,
                       const std::vector<StepSpan>& spans, uint64_t aux_workspace_bytes) {
  MemoryPlan plan;
  plan.offsets.assign(network.num_tensors(), -1);
  plan.bytes.assign(network.num_tensors(), 0);
  std::vector<bool> is_output(network.num_tensors(), false);
  for (Tensor t : network.outputs()) is_output[t.id] = true;

  // The tensor owning t's bytes (views may chain: a reshape of a reshape).
  const auto storage = [&](uint32_t t) {
    for (auto it = views.find(t); it != views.end(); it = views.find(t)) t = it->second;
    return t;
  };
  std::vector<Interval> life(network.num_tensors());
  for (size_t s = 0; s < steps.size(); ++s) {
    const StepSpan span = s < spans.size() ? spans[s] : StepSpan{s, s};
    for (Tensor t : steps[s].outputs)
      if (!is_output[t.id])
        life[t.id].first = std::min(life[t.id].first, span.first), life[t.id].last = std::max(life[t.id].last, span.last);
  }
  for (size_t s = 0; s < steps.size(); ++s) {
    const StepSpan span = s < spans.size() ? spans[s] : StepSpan{s, s};
    for (const auto* list : {&steps[s].inputs, &steps[s].extra_inputs})
      for (Tensor read : *list) {
        if (!read.valid()) continue;
        const uint32_t t = storage(read.id);
        if (life[t].first != SIZE_MAX) life[t].last = std::max(life[t].last, span.last);
      }
  }
  std::vector<uint32_t> order;
  for (uint32_t t = 0; t < life.size(); ++t)
    if (life[t].first != SIZE_MAX) order.push_back(t);
  // Largest first: big tensors claim low offsets, small ones fill the gaps.
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return max_bytes[a] > max_bytes[b]; });

  struct Placed {
    uint64_t offset, size;
    Interval life;
  };
  std::vector<Placed> placed;
  for (uint32_t t : order) {
    const uint64_t size = align_up(std::max<uint64_t>(max_bytes[t], 1));
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of tensors alive at the same time
    for (const Placed& p : placed)
      if (!(p.life.last < life[t].first || life[t].last < p.life.first)) busy.emplace_back(p.offset, p.offset + p.size);
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    placed.push_back({offset, size, life[t]});
    plan.offsets[t] = static_cast<int64_t>(offset);
    plan.bytes[t] = max_bytes[t];
    plan.activation_bytes = std::max(plan.activation_bytes, offset + size);
  }
  for (const auto& [view, base] : views) {
    plan.offsets[view] = plan.offsets[storage(base)];
    plan.bytes[view] = max_bytes[view];
  }
  plan.workspace_bytes = align_up(workspace_bytes);
  plan.aux_workspace_bytes = align_up(aux_workspace_bytes);
  return plan;
}

}  // namespace tensoracle::backends::cuda
