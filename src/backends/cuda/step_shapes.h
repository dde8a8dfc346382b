// The shapes and layouts a tactic prepared itself for (library plans, launch arguments), so that
// run() and workspace_size() can tell, without allocating, whether a step is still the one it
// prepared:
//
//   shapes_ = StepShapes::of(step);            // in initialize()
//   if (!shapes_.matches(step)) return ...;    // in run()
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/step.h"

namespace tensoracle::backends::cuda {

struct StepShapes {
  std::vector<Dims> shapes;    // anchor inputs (omitted: empty dims), program inputs, step outputs
  std::vector<Layout> layouts;  // input, output, then epilogue input layouts

  static StepShapes of(const StepInstance& step);
  bool matches(const StepInstance& step) const;
  // A text naming exactly these shapes and layouts (a map key).
  std::string key() const;
};

// run()'s refusal of a step its tactic did not prepare for (not initialized, or at other
// shapes): kFailedPrecondition naming the layer and the tactic.
Status not_prepared_for(const StepInstance& step, const std::string& tactic);

}  // namespace tensoracle::backends::cuda
