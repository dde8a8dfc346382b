// The convolution tactic families (registered in op_families.h, in preference order):
//
// - "cudnn.conv" (kConvolution) and "cudnn.deconv" (kDeconvolution): cuDNN graphs
//   (cudnn_conv_graph.h). Candidates are the engine configurations that build for the step,
//   fused ones first (bias and epilogue inside the cuDNN graph), then plain ones followed by
//   this family's epilogue kernel. Tactic "cudnn.conv#<i>", choice {"plan": i, "fused": bool,
//   "engine": "<cuDNN engine tag>"}; replay rebuilds the graph for the step's shapes and takes
//   the engine with that tag (the heuristics' first when the tag is not offered at these shapes).
//   For fp16/bf16 2-D convolutions with few input channels (C <= 32, not a multiple of 8) the
//   list goes on with channel-padded candidates (conv_pad_channels.h), "cudnn.conv#<i>+pad8",
//   whose choice adds "pad_channels": 8.
// - "cudnn.qconv" (kConvolution): Q/DQ-fused convolutions (qconv_plan.h), first in preference;
//   it takes only steps with quantize/dequantize layers, which the others never get.
// - "kernel.conv_direct" (both kinds): a direct CUDA kernel (conv_kernels.h) for whatever cuDNN
//   refuses, last in preference; the same epilogue rules.
#pragma once

#include <memory>

#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

// What both families take for `node` (FamilyTraits): the epilogue (conv_epilogue.h); for a
// convolution also x, y and the weight channels-last (conv_problem.h). Deconvolutions are offered
// linear tensors only: their weight must be linear, and channels-last deconvolution is not yet
// measured to help.
inline FamilyTraits conv_traits(const Node& node) {
  FamilyTraits t;
  t.epilogue = true;
  if (node.kind == OpKind::kConvolution) {
    t.nhwc = true;
    t.nhwc_constant_inputs = {1};
  }
  return t;
}

std::shared_ptr<const TacticFamily> make_cudnn_conv_family(OpKind kind);  // kConvolution or kDeconvolution
std::shared_ptr<const TacticFamily> make_direct_conv_family();  // both kinds
std::shared_ptr<const TacticFamily> make_cudnn_qconv_family();  // kConvolution with quantize/dequantize layers

}  // namespace tensoracle::backends::cuda
