// make_cuda_plan: the order of the planner's phases, the tactic choice per step, the streams
// and the workspace. Each phase is a file of its own: plan_lowering.h (steps and fusion),
// plan_layouts.h (channels-last), plan_views.h (steps that are only views), memory_plan.h
// (tensor sizes, workspaces, the arena).
#include "backends/cuda/planner.h"

#include <fmt/format.h>

#include <algorithm>

#include "backends/cuda/device.h"
#include "backends/cuda/plan_layouts.h"
#include "backends/cuda/plan_lowering.h"
#include "backends/cuda/plan_views.h"
#include "backends/cuda/step_schedule.h"
#include "backends/cuda/tactic_timer.h"
#include "backends/plan_network.h"
#include "core/errors.h"
#include "passes/passes.h"

namespace tensoracle::backends::cuda {

namespace {

int candidate_limit(int level) { return level <= 0 ? 1 : 1 << std::min(level, 5); }

std::string step_label(const Network& net, const PlannedStep& step) {
  std::string label = net.node(step.anchor).name;
  for (size_t n : step.fused)
    if (n != step.anchor) label += "+" + net.node(n).name;
  return label;
}

}  // namespace

Result<CudaPlan> make_cuda_plan(const Network& network, const std::vector<OptimizationProfile>& profiles,
                                const PlanOptions& options, const StepProgressFn& progress) {
  if (profiles.empty()) return invalid_argument("cuda plan: no optimization profile");
  TO_ASSIGN_OR_RETURN(DeviceInfo device, current_device());
  CudaPlan plan;
  TO_ASSIGN_OR_RETURN(plan.network, passes::optimize_for_inference(network, &plan.log));
  const Network& net = plan.network;
  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> opt, infer_tensor_descs(net, profile_shapes(profiles.front(), &ShapeRange::opt)));
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind != OpKind::kConstant && tactic_families().for_kind(node.kind).empty())
      return unsupported("layer '{}': the cuda backend has no implementation of {}", node.name, op_kind_name(node.kind));
  }
  plan.steps = lower_to_steps(net, opt, device, &plan.log);
  assign_layouts(net, plan.steps, opt, device, plan.log);
  const std::map<uint32_t, uint32_t> views = take_views(net, plan.steps, opt, device, plan.log);

  // A tactic's workspace need is not monotonic in the shapes (cuBLASLt and cuDNN pick other
  // algorithms at other sizes): each step gets the most it needs at any profile's min, opt and
  // max; shapes in between that would need more get a configuration within it (RunContext).
  TO_ASSIGN_OR_RETURN(const std::vector<std::vector<TensorDesc>> corners, descs_at_corners(net, profiles));
  TacticTimer timer(options.timing_iterations, options.workspace_limit_bytes);
  TO_RETURN_IF_ERROR(timer.start(device));
  std::vector<uint64_t> step_workspace(plan.steps.size(), 0);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    PlannedStep& step = plan.steps[s];
    TO_ASSIGN_OR_RETURN(StepInstance inst, instantiate(net, step, opt));
    inst.fp8_fast_accumulation = options.fp8_fast_accumulation;
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
    if (std::string note = explicit_quantization_note(inst, chosen, label); !note.empty()) plan.log.push_back(std::move(note));
    TO_ASSIGN_OR_RETURN(step_workspace[s], largest_workspace(*chosen.tactic, net, step, corners));
    if (progress)
      progress(s, plan.steps.size(),
               fmt::format("step {}/{} {} ({}): {}{}", s + 1, plan.steps.size(), label, op_kind_name(inst.anchor.node.kind),
                           step.tactic, step.time_ms >= 0 ? fmt::format(" {:.4f} ms", step.time_ms) : std::string()));
  }
  choose_streams(net, plan.steps, options.auxiliary_streams);
  TO_ASSIGN_OR_RETURN(const StepSchedule schedule, schedule_steps(net, plan.steps));
  const StreamWorkspaces workspace = stream_workspaces(plan.steps, step_workspace);
  if (workspace.total() > options.workspace_limit_bytes)
    return invalid_argument("cuda plan: the chosen tactics need {} bytes of workspace, over the limit of {}",
                            workspace.total(), options.workspace_limit_bytes);
  size_t auxiliary = 0;
  for (const PlannedStep& step : plan.steps) auxiliary += step.stream == kAuxiliaryStream;
  if (auxiliary) plan.log.push_back(fmt::format("streams: {} of {} steps run on the auxiliary stream", auxiliary, plan.steps.size()));
  TO_ASSIGN_OR_RETURN(std::vector<uint64_t> bytes, max_tensor_bytes(net, profiles));
  plan.memory = plan_memory(net, plan.steps, bytes, workspace.main, views, schedule.spans, workspace.auxiliary);
  return plan;
}

}  // namespace tensoracle::backends::cuda
