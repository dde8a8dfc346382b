// deformable: a small CNN with one modulated deformable convolution (DCNv2), defined against
// PyTorch state_dict names; the PyTorch module it mirrors (DeformableNet) is in
// scripts/gen-deformable-references.py.
//
//   image [N, 8, H, W] -> stem: conv 3x3 (8 -> 16) + relu = s
//   offset = conv 3x3 (16 -> 18)(s), mask = sigmoid(conv 3x3 (16 -> 9)(s))
//   d = relu(deform_conv2d(s, offset, dcn.weight [16, 16, 3, 3], dcn.bias, padding 1, mask))
//   out [N, 4, H, W] = head: conv 1x1 (16 -> 4)(d)
//
// The deformable convolution comes in three forms computing the same function:
//   kComposition  standard layers only: one grid_sample samples every kernel tap at once (the
//                 taps stacked along the grid's height), the mask multiplies the samples, which
//                 are then already the im2col column matrix, and one matmul applies the weight
//   kPlugin       one tensoracle::dcnv2 plugin layer (libtensoracle_plugins.so, plugins/dcnv2)
//   kCustomPlugin the example's own cubin plugin deformable::deform_sample (custom_plugin/,
//                 libdeform_sample_plugin.so): the offset and mask convolutions merged into one
//                 (27 output channels: the 18 offsets, then the 9 mask logits), the plugin samples,
//                 applies the mask's sigmoid and writes the column matrix, and a matmul applies
//                 the weight
// The shapes are static: the composition's sampling grid is a constant of H and W, and the
// plugins' output shapes are computed.
#pragma once

#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"

namespace deformable {

inline constexpr const char* kInput = "image";  // fp32 [N, 8, H, W], static
inline constexpr const char* kOutput = "out";   // fp32 [N, 4, H, W]

enum class Form { kComposition, kPlugin, kCustomPlugin };

// Defines the network; returns the first definition error (for example a missing weight, or the
// plugin forms without their plugin library among the network's plugins). `precision` (fp32 or
// fp16) is the type every layer computes in; the engine's I/O is fp32 either way.
tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights,
                          tensoracle::Dims input_shape = {1, 8, 16, 16},
                          tensoracle::DataType precision = tensoracle::DataType::kFloat32,
                          Form form = Form::kComposition);

}  // namespace deformable
