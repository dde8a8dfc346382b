// Layouts: which tensors of the lowered steps (plan_lowering.h) are stored channels-last.
//
//   assign_layouts(net, steps, opt_descs, device, plan.log);  // sets every step's *_layouts
//
// Channels-last (NHWC) for the fp16/bf16 and int8/fp8 e4m3 rank-4 tensors that flow between
// steps whose families take it (FamilyTraits::nhwc: convolutions, pooling, pointwise programs,
// quantize/dequantize with one scale) when one of those prefers it (FamilyTraits::prefers_nhwc:
// tensor-core convolutions, Q/DQ-fused ones included); every other tensor, and
// every network input and output, stays linear. A pointwise chain reading a linear tensor and
// writing an NHWC one is the reformat, at no extra pass. A constant that only such steps read as
// a weight (FamilyTraits::nhwc_constant_inputs) of a channels-last input 0 goes channels-last
// too (a 2-D convolution's [K, C/G, R, S] stored KRSC: the order tensor-core engines read,
// reordered once when the engine loads). A step that refuses its layouts sends its tensors back
// to linear (logged).
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/planned_step.h"
#include "backends/cuda/run_context.h"

namespace tensoracle::backends::cuda {

void assign_layouts(const Network& net, std::vector<PlannedStep>& steps, const std::vector<TensorDesc>& desc,
                    const DeviceInfo& device, std::vector<std::string>& log);

}  // namespace tensoracle::backends::cuda
