// Activation memory: one arena per execution context, every intermediate tensor at a fixed
// offset chosen at build time so that tensors alive at the same time never overlap (buffer reuse
// by liveness), sized for the largest shapes of every profile. At the arena's end sit the
// workspace shared by the main stream's steps (they run one after another) and the one shared by
// the auxiliary stream's steps (step_schedule.h), each the most its steps need at any profile's
// min, opt and max shapes.
//
//   TO_ASSIGN_OR_RETURN(auto corners, descs_at_corners(net, profiles));
//   TO_ASSIGN_OR_RETURN(step_bytes[s], largest_workspace(*tactic, net, steps[s], corners));  // per step
//   const StreamWorkspaces w = stream_workspaces(steps, step_bytes);
//   TO_ASSIGN_OR_RETURN(auto bytes, max_tensor_bytes(net, profiles));
//   MemoryPlan plan = plan_memory(net, steps, bytes, w.main, views, schedule.spans, w.auxiliary);
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/planned_step.h"
#include "backends/cuda/step_schedule.h"
#include "tensoracle/engine_file.h"

namespace tensoracle::backends::cuda {

inline constexpr uint64_t kArenaAlignment = 256;

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per tensor id: offset in the arena, -1 when not in it
  std::vector<uint64_t> bytes;   // per tensor id: the bytes reserved (its size at the largest shapes)
  uint64_t activation_bytes = 0;
  uint64_t workspace_bytes = 0;
  uint64_t aux_workspace_bytes = 0;  // after the main workspace
  uint64_t arena_bytes() const { return activation_bytes + workspace_bytes + aux_workspace_bytes; }
};

// Places every tensor a step writes that is not a network output (those live in the caller's
// buffers). `max_bytes[t]` is tensor t's size at the largest shapes. `views` maps a tensor that
// no step writes to the tensor whose bytes it reinterprets (a reshape): it gets that tensor's
// offset, and that tensor stays alive as long as the view is read. `spans` (one per step; empty:
// each step at its own position) are the plan positions where a step may be running: a step's
// outputs are alive from its span's first position, its inputs until its span's last.
MemoryPlan plan_memory(const Network& network, const std::vector<PlannedStep>& steps, const std::vector<uint64_t>& max_bytes,
                       uint64_t workspace_bytes, const std::map<uint32_t, uint32_t>& views = {},
                       const std::vector<StepSpan>& spans = {}, uint64_t aux_workspace_bytes = 0);

// The input shapes of `profile` at one of its points (&ShapeRange::min, ::opt or ::max).
std::map<std::string, Dims> profile_shapes(const OptimizationProfile& profile, Dims ShapeRange::*point);

// Sizes (bytes) of every tensor at the largest shapes of all profiles: the max over the
// profiles of each tensor's size at that profile's max shapes.
Result<std::vector<uint64_t>> max_tensor_bytes(const Network& network, const std::vector<OptimizationProfile>& profiles);

// Every tensor's description at each profile's min, opt and max shapes (3 vectors per profile).
Result<std::vector<std::vector<TensorDesc>>> descs_at_corners(const Network& network,
                                                              const std::vector<OptimizationProfile>& profiles);

// The most `tactic` needs for `step` at any of the shape sets `descs` (descs_at_corners). A
// tactic's need is not monotonic in the shapes: cuBLASLt and cuDNN pick other algorithms at other
// sizes, and a top-k of long rows sorts in the workspace, so a later, larger profile may need more
// than the first.
Result<uint64_t> largest_workspace(const CudaTactic& tactic, const Network& network, const PlannedStep& step,
                                   const std::vector<std::vector<TensorDesc>>& descs);

// The workspace each stream's steps share (they run one after another): the largest of
// `step_bytes[s]` over the steps s on that stream.
struct StreamWorkspaces {
  uint64_t main = 0;
  uint64_t auxiliary = 0;
  uint64_t total() const { return main + auxiliary; }
};
StreamWorkspaces stream_workspaces(const std::vector<PlannedStep>& steps, const std::vector<uint64_t>& step_bytes);

}  // namespace tensoracle::backends::cuda
