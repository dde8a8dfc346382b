// Activation memory: one arena per execution context, every intermediate tensor at a fixed
// offset chosen at build time so that tensors alive at the same time never overlap (buffer reuse
// by liveness), sized for the largest shapes of every profile. At the arena's end sit the
// workspace shared by the main stream's steps (they run one after another) and the one shared by
// the auxiliary stream's steps (step_schedule.h).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "backends/cuda/planned_step.h"
#include "backends/cuda/step_schedule.h"

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

}  // namespace tensoracle::backends::cuda
