// A step as the plan records it (tensor ids of the plan's network, no shapes), and how it becomes
// a StepInstance (step.h) once every tensor has a concrete description.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/cuda/run_context.h"
#include "backends/cuda/step.h"

namespace tensoracle::backends::cuda {

class TacticFamily;

struct PlannedStep {
  size_t anchor = 0;
  // Pointwise nodes computed by the step's program, in program order (for a pointwise anchor the
  // anchor is the first; for any other anchor these are its epilogue).
  std::vector<size_t> fused;
  std::vector<Tensor> inputs;        // anchor inputs, or program inputs for pointwise anchors
  std::vector<Tensor> extra_inputs;  // epilogue inputs 1..n
  std::vector<Tensor> outputs;
  std::vector<Layout> input_layouts;
  std::vector<Layout> output_layouts;
  std::vector<Layout> extra_input_layouts;
  std::string family;  // TacticFamily::name of the chosen tactic
  std::string tactic;  // CudaTactic::name
  nlohmann::json choice = nlohmann::json::object();
  double time_ms = -1;  // the chosen candidate's median at build time (-1: not timed)
  int stream = 0;       // 0: the caller's stream; 1: the execution's auxiliary stream (step_schedule.h)

  bool is_pointwise_chain(const Network& network) const { return is_pointwise(network.node(anchor).kind); }
  // Every graph node the step computes (anchor first).
  std::vector<size_t> nodes() const;
};

// The StepInstance of `step` with the tensor descriptions `desc` (indexed by tensor id). The
// instance points into `network` and `desc`, which must outlive it.
Result<StepInstance> instantiate(const Network& network, const PlannedStep& step, const std::vector<TensorDesc>& desc);

// The families of the step's anchor kind (cuda_tactic.h tactic_families) that accept `step` on
// `device`, in preference order; `reasons` (optional) collects each refusal as "<family>: <reason>".
std::vector<const TacticFamily*> accepting_families(const StepInstance& step, const DeviceInfo& device,
                                                    std::vector<std::string>* reasons);
// Whether some tactic family accepts `step` on `device` at the descriptions `desc`: the planner's
// test of every fusion, layout and view it tries.
bool some_family_accepts(const Network& network, const PlannedStep& step, const std::vector<TensorDesc>& desc,
                         const DeviceInfo& device);

}  // namespace tensoracle::backends::cuda
