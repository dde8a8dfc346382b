// The plugin family ("plugin"): a plugin layer runs its plugin (plugin_runtime.h). The tactic
// makes the layer's plugin from the step's plugins (StepInstance::plugins, the network's) and the
// layer's recorded parameters, with the type/format of each input negotiated
// (format_negotiation.h) from what its producer wrote: a channels-last fp16 tensor is already
// fp16/HWC, and fp16/HWC8 when C % 8 == 0 (formats_of_layout), so a plugin taking either reads it
// in place. Inputs in another type or format are converted into the workspace before enqueue(),
// and outputs the plugin writes in another format than the step's buffer holds are converted
// back after it (kernels/format_conversion.h; HWC8 padding is zeroed). The chosen formats are
// the tactic's recorded choice ({"formats": ...}, plugin_formats.h): a plan replays them after
// asking the plugin whether it still supports them. configure() gets them with the step's
// shapes; the workspace holds the plugin's own (workspace_bytes) and the conversions' scratch.
// The family takes nhwc tensors (FamilyTraits::nhwc) but refuses an nhwc input it would read
// LINEAR, so the planner keeps that tensor linear rather than converting it back.
#pragma once

#include <memory>

#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

std::shared_ptr<const TacticFamily> make_plugin_family();  // kPlugin "plugin"

}  // namespace tensoracle::backends::cuda
