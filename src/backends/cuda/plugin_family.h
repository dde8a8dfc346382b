// The plugin family ("plugin"): a plugin layer runs its plugin (plugin_runtime.h). The tactic
// makes the layer's plugin from the step's plugins (StepInstance::plugins, the network's) and the
// layer's recorded parameters, configures it in initialize() for the step's shapes with LINEAR
// formats in the tensors' own types, and calls enqueue() in run() with the step's buffers and its
// workspace from the memory plan (workspace_size asks the plugin). Format negotiation (HWC, HWC8)
// and reformats around plugins are not implemented yet: every plugin tensor is linear.
#pragma once

#include <memory>

#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

std::shared_ptr<const TacticFamily> make_plugin_family();  // kPlugin "plugin"

}  // namespace tensoracle::backends::cuda
