// tensoracle::dcnv2 1.0.0: modulated deformable convolution (DCNv2), exactly
// torchvision.ops.deform_conv2d(x, offset, weight, bias, stride, padding, dilation, mask).
//
//   inputs   x [N, C, H, W], offset [N, 2*dg*kh*kw, Ho, Wo] ((dy, dx) per deformable group and
//            kernel tap, taps in row-major order), mask [N, dg*kh*kw, Ho, Wo],
//            weight [K, C/groups, kh, kw], bias [K]; all fp32 or all fp16 (the type parameter),
//            LINEAR, except that an fp16 x may be HWC8 (C padded to a multiple of 8; the
//            padding is never read): x fp32/LINEAR, fp16/LINEAR or fp16/HWC8, the others LINEAR
//            in x's type (supports(); configure() refuses anything else, naming the input)
//   output   y [N, K, Ho, Wo] of the same type, LINEAR,
//            Ho = (H + 2*pad_h - dil_h*(kh-1) - 1) / stride_h + 1
//            (likewise Wo); a computed shape, so every input dim must be static
//   params   dcnv2_parameters.h
// CPU implementation (the cpu backend's reference) for every combination, fp32 accumulation;
// CUDA implementation in CUDA builds (dcnv2_cuda.h). Both follow dcnv2_math.h, x's addressing
// in either format included.
#pragma once

#include "tensoracle/plugin_runtime.h"

namespace tensoracle_plugins {

tensoracle::PluginCreator dcnv2_creator();

}  // namespace tensoracle_plugins
