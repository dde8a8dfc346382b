// The CUDA backend's engine plan as JSON (docs/cuda-backend.md "Inspecting"; its checks in
// docs/engine-format.md "Validation"): the planned network and its constants table
// (plan_network.h), one "layers" entry per step -- the graph layers it fuses, its kind, tactic
// family, tactic and recorded choice, precision, buffers and layouts, the build-time median --
// the memory plan, and the build log. Loading replays the recorded choices; nothing is timed
// again.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/planner.h"
#include "backends/plan_network.h"

namespace tensoracle::backends::cuda {

// 2: steps on two streams; 3: plugin steps record their negotiated formats (plugin_family.h).
inline constexpr int kCudaPlanVersion = 3;

struct SerializedPlan {
  std::string json;
  std::vector<PlanBlob> blobs;
};
SerializedPlan serialize_plan(const CudaPlan& plan);

// Rebuilds the plan of `file` from what the engine layer checked (its JSON and network): every
// step's layers, tensors, layouts, tactic choice and stream, and the memory plan -- each slot
// inside the arena and at least the tensor's size at the largest shapes of every profile, every
// tensor a step touches placed, the arena within the GPU's memory. Needs no device.
Result<CudaPlan> deserialize_plan(const CheckedPlan& plan, const EngineFile& file);

// The tactic choices a plan records, by step anchor name (PlanOptions::replay): what a
// deterministic rebuild replays. `source` names the record in errors.
Result<ReplayChoices> recorded_choices(std::string_view plan_json, const std::string& source);

}  // namespace tensoracle::backends::cuda
