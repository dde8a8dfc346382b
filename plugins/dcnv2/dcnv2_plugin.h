// tensoracle::dcnv2 1.0.0: modulated deformable convolution (DCNv2), exactly
// torchvision.ops.deform_conv2d(x, offset, weight, bias, stride, padding, dilation, mask).
//
//   inputs   x [N, C, H, W], offset [N, 2*dg*kh*kw, Ho, Wo] ((dy, dx) per deformable group and
//            kernel tap, taps in row-major order), mask [N, dg*kh*kw, Ho, Wo],
//            weight [K, C/groups, kh, kw], bias [K]; all fp32 or all fp16 (the type parameter),
//            LINEAR
//   output   y [N, K, Ho, Wo] of the same type, Ho = (H + 2*pad_h - dil_h*(kh-1) - 1) / stride_h + 1
//            (likewise Wo); a computed shape, so every input dim must be static
//   params   dcnv2_parameters.h
// CPU implementation (the cpu backend's reference) for both types, fp32 accumulation; CUDA
// implementation in CUDA builds (dcnv2_cuda.h). Both follow dcnv2_math.h.
#pragma once

#include "tensoracle/plugin_runtime.h"

namespace tensoracle_plugins {

tensoracle::PluginCreator dcnv2_creator();

}  // namespace tensoracle_plugins
