// Two streams per execution: the caller's ("main") and one auxiliary stream of the execution
// context, so that a branch of the network runs beside the steps that do not need it: a ResNet
// downsample convolution beside the block's first two convolutions, one of the three projections
// of the same tensor in attention beside another. At batch 1 every such step is too small to fill
// the GPU, so running two at once saves about one step's latency per branch.
//
// The plan records each step's stream (PlannedStep::stream); everything else follows from the
// steps' data dependencies, the same way at build and at load:
// - an auxiliary step waits for the last main step it depends on (or the start of the run: the
//   caller's work before it), then runs after the auxiliary steps before it;
// - the first main step that reads an auxiliary step's output (directly or through a view) waits
//   for it, and the run ends with main waiting for the auxiliary stream;
// - an auxiliary step may run at any plan position between its fork and its join, so the memory
//   plan keeps its tensors alive over that whole span, and it has a workspace of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/cuda/planned_step.h"

namespace tensoracle::backends::cuda {

inline constexpr int kMainStream = 0;
inline constexpr int kAuxiliaryStream = 1;

struct StepSpan {
  size_t first = 0, last = 0;  // the plan positions over which the step may be running
};

struct StepSchedule {
  // Per step: the auxiliary step's fork, the main step after which it may start (-1: the start
  // of the run); -1 for main steps.
  std::vector<int64_t> fork_after;
  // Per step: whether main records an event after it (some auxiliary step forks there).
  std::vector<bool> forks;
  // Per main step: the auxiliary steps whose completion it waits for before it runs.
  std::vector<std::vector<size_t>> joins;
  // Per step: where it may be running, for liveness.
  std::vector<StepSpan> spans;
  bool uses_auxiliary = false;
};

// The steps whose outputs step s reads, for every step (a view's reader depends on the step
// that wrote the viewed bytes).
std::vector<std::vector<size_t>> step_dependencies(const Network& network, const std::vector<PlannedStep>& steps);

// Puts on the auxiliary stream every step that does not depend on the step right before it
// when that step runs on main (so main has that step to run meanwhile). `auxiliary_streams` 0
// keeps every step on main.
void choose_streams(const Network& network, std::vector<PlannedStep>& steps, int auxiliary_streams);

// The forks, joins and spans of `steps` as their streams say (kCorruptData for a stream other
// than main or auxiliary).
Result<StepSchedule> schedule_steps(const Network& network, const std::vector<PlannedStep>& steps);

}  // namespace tensoracle::backends::cuda
