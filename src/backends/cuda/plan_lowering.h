// Lowering: the plan network's live layers become steps (planned_step.h), with fusion.
//
//   std::vector<PlannedStep> steps = lower_to_steps(net, opt_descs, device, &plan.log);
//
// Q/DQ fusion comes first: a layer whose families fuse quantization (FamilyTraits::
// quantize_fusion) takes the dequantize layers that alone produce its operands, its epilogue and
// a trailing quantize layer when such a family accepts the step (step.h); otherwise those layers
// stay steps of their own and `log` gets "<layer>: Q/DQ kept explicit: <why>".
// Layers are walked in definition order. A layer whose families take an epilogue
// (FamilyTraits::epilogue: matrix multiplies, (de)convolutions) absorbs the chain of pointwise
// layers that alone consume its output while some family accepts the growing step; a pointwise
// layer (the pointwise family declares the epilogue too) starts a chain that absorbs its single
// pointwise consumers the same way; every other layer is one step. A step runs where its last
// layer was. Every tensor is linear here (plan_layouts.h chooses other layouts afterwards).
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/planned_step.h"
#include "backends/cuda/run_context.h"

namespace tensoracle::backends::cuda {

// The steps of `net` in run order; `desc` describes every tensor at the shapes fusion is judged
// at (the first profile's opt).
std::vector<PlannedStep> lower_to_steps(const Network& net, const std::vector<TensorDesc>& desc, const DeviceInfo& device,
                                        std::vector<std::string>* log = nullptr);

}  // namespace tensoracle::backends::cuda
