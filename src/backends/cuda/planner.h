// The CUDA builder (CudaBackend::plan): inference passes, lowering to steps with fusion
// (plan_lowering.h), layouts (plan_layouts.h), views (plan_views.h), tactic timing or replay
// (tactic_timer.h), the streams (step_schedule.h) and the memory plan (memory_plan.h). The result
// is what the engine stores (plan_json.h) and what the runtime (runtime.h) executes.
//
//   TO_ASSIGN_OR_RETURN(CudaPlan plan, make_cuda_plan(network, profiles, PlanOptions{}, nullptr));
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
  // Fused fp8 GEMMs may accumulate in cuBLASLt's fast mode (BuilderSettings::fp8_fast_accumulation).
  bool fp8_fast_accumulation = false;
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
// workspace for the most its tactic needs at any profile's min, opt and max shapes (memory_plan.h
// descs_at_corners, largest_workspace; at shapes in between, a tactic that would need more takes
// a configuration within it).
Result<CudaPlan> make_cuda_plan(const Network& network, const std::vector<OptimizationProfile>& profiles,
                                const PlanOptions& options, const StepProgressFn& progress);

}  // namespace tensoracle::backends::cuda
