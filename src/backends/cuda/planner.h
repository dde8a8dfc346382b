// The CUDA builder (CudaBackend::plan): inference passes, lowering to steps with fusion, layouts,
// views, tactic timing or replay, the memory plan and the streams. The result is what the engine
// stores (plan_json.h) and what the runtime (runtime.h) executes.
//
// Lowering walks the live layers in definition order. A matrix multiply or convolution absorbs
// the chain of pointwise layers that alone consume its output while some tactic family accepts
// the growing epilogue; a pointwise layer starts a chain that absorbs its single pointwise
// consumers the same way; every other layer is one step. A step runs where its last layer was.
// A reshape of an intermediate tensor (linear in and out) is no step at all but a view: its
// output shares the input's bytes in the memory plan.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/memory_plan.h"
#include "backends/cuda/planned_step.h"
#include "backends/cuda/run_context.h"
#include "tensoracle/engine_file.h"

namespace tensoracle::backends::cuda {

// Tactic choices by step anchor name: {"family", "choice"}.
using ReplayChoices = std::map<std::string, std::pair<std::string, nlohmann::json>>;

struct PlanOptions {
  // 0: the first candidate of the first family that accepts a step, nothing timed; higher levels
  // time more candidates (1: 2, 2: 4, 3: 8, 4: 16, 5: 32).
  int optimization_level = 3;
  int timing_iterations = 10;
  uint64_t workspace_limit_bytes = uint64_t{1} << 30;
  // 1: branches of the network may run on an auxiliary stream beside the main one
  // (step_schedule.h); 0: every step on the caller's stream.
  int auxiliary_streams = 1;
  // Recorded choices to replay instead of timing (plan_json.h recorded_choices).
  ReplayChoices replay;
};

struct CudaPlan {
  Network network;  // after the inference passes (passes.h)
  std::vector<PlannedStep> steps;
  MemoryPlan memory;
  std::vector<std::string> log;  // passes applied, tactics skipped and why
};

// Called once per step while planning: (index, count, message).
using StepProgressFn = std::function<void(size_t, size_t, const std::string&)>;

// Plans `network` for the current GPU. Steps are formed and timed at the first profile's opt
// shapes; the activation arena is sized for the largest shapes of every profile, each step's
// workspace for the first profile's max shapes only (a later profile with larger shapes can
// need more).
Result<CudaPlan> make_cuda_plan(const Network& network, const std::vector<std::map<std::string, ShapeRange>>& profiles,
                                const PlanOptions& options, const StepProgressFn& progress);

// Sizes (bytes) of every tensor at the largest shapes of all profiles.
Result<std::vector<uint64_t>> max_tensor_bytes(const Network& network,
                                               const std::vector<std::map<std::string, ShapeRange>>& profiles);

// The families that accept `step` on `device`; `reasons` collects each refusal.
std::vector<const TacticFamily*> accepting_families(const StepInstance& step, const DeviceInfo& device,
                                                    std::vector<std::string>* reasons);

}  // namespace tensoracle::backends::cuda
