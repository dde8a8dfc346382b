#include "backends/cuda/step_schedule.h"

#include <algorithm>

#include "core/errors.h"

namespace tensoracle::backends::cuda {

std::vector<std::vector<size_t>> step_dependencies(const Network& network, const std::vector<PlannedStep>& steps) {
  std::vector<int64_t> writer(network.num_tensors(), -1);
  for (size_t s = 0; s < steps.size(); ++s)
    for (Tensor t : steps[s].outputs) writer[t.id] = static_cast<int64_t>(s);
  // The step that wrote the bytes `t` names: a tensor no step writes is a network input, a
  // constant, or a view (a reshape or transpose that became no step) of its layer's input.
  const auto source = [&](Tensor t) -> int64_t {
    for (size_t hops = 0; hops <= network.num_tensors() && t.valid(); ++hops) {
      if (writer[t.id] >= 0) return writer[t.id];
      const int64_t node = network.tensor(t).producer;
      if (node < 0) return -1;
      const Node& layer = network.node(static_cast<size_t>(node));
      if (layer.kind == OpKind::kConstant || layer.inputs.empty()) return -1;
      t = layer.inputs[0];
    }
    return -1;
  };
  std::vector<std::vector<size_t>> deps(steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    for (const auto* list : {&steps[s].inputs, &steps[s].extra_inputs})
      for (Tensor t : *list) {
        const int64_t d = t.valid() ? source(t) : -1;
        if (d >= 0 && static_cast<size_t>(d) != s) deps[s].push_back(static_cast<size_t>(d));
      }
    std::sort(deps[s].begin(), deps[s].end());
    deps[s].erase(std::unique(deps[s].begin(), deps[s].end()), deps[s].end());
  }
  return deps;
}

void choose_streams(const Network& network, std::vector<PlannedStep>& steps, int auxiliary_streams) {
  for (PlannedStep& step : steps) step.stream = kMainStream;
  if (auxiliary_streams <= 0) return;
  const std::vector<std::vector<size_t>> deps = step_dependencies(network, steps);
  for (size_t s = 1; s < steps.size(); ++s) {
    const bool needs_previous = std::binary_search(deps[s].begin(), deps[s].end(), s - 1);
    if (steps[s - 1].stream == kMainStream && !needs_previous) steps[s].stream = kAuxiliaryStream;
  }
}

Result<StepSchedule> schedule_steps(const Network& network, const std::vector<PlannedStep>& steps) {
  const size_t n = steps.size();
  for (const PlannedStep& step : steps)
    if (step.stream != kMainStream && step.stream != kAuxiliaryStream)
      return corrupt_data("cuda plan: step '{}' runs on stream {} (0 or 1 expected)", network.node(step.anchor).name,
                          step.stream);
  const std::vector<std::vector<size_t>> deps = step_dependencies(network, steps);
  StepSchedule schedule;
  schedule.fork_after.assign(n, -1);
  schedule.forks.assign(n, false);
  schedule.joins.assign(n, {});
  schedule.spans.resize(n);
  std::vector<size_t> joined_at(n, n);  // auxiliary step -> the main step that first waits for it
  int64_t joined_through = -1;          // every auxiliary step up to this one has been waited for
  for (size_t s = 0; s < n; ++s) {
    schedule.spans[s] = {s, s};
    if (steps[s].stream == kAuxiliaryStream) {
      schedule.uses_auxiliary = true;
      for (size_t d : deps[s])
        if (steps[d].stream == kMainStream) schedule.fork_after[s] = std::max<int64_t>(schedule.fork_after[s], static_cast<int64_t>(d));
      if (schedule.fork_after[s] >= 0) schedule.forks[static_cast<size_t>(schedule.fork_after[s])] = true;
      continue;
    }
    // The auxiliary stream is in order: waiting for its latest needed step covers the earlier ones.
    int64_t latest = -1;
    for (size_t d : deps[s])
      if (steps[d].stream == kAuxiliaryStream && static_cast<int64_t>(d) > joined_through) latest = std::max<int64_t>(latest, static_cast<int64_t>(d));
    if (latest < 0) continue;
    schedule.joins[s].push_back(static_cast<size_t>(latest));
    for (int64_t a = joined_through + 1; a <= latest; ++a)
      if (steps[static_cast<size_t>(a)].stream == kAuxiliaryStream) joined_at[static_cast<size_t>(a)] = s;
    joined_through = latest;
  }
  for (size_t s = 0; s < n; ++s)
    if (steps[s].stream == kAuxiliaryStream)
      schedule.spans[s] = {static_cast<size_t>(schedule.fork_after[s] + 1), joined_at[s] == n ? n - 1 : joined_at[s] - 1};
  return schedule;
}

}  // namespace tensoracle::backends::cuda
