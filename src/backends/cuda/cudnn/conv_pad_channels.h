// Zero-padding the input channels of a 2-D convolution for the padded "cudnn.conv" candidates.
//
// cuDNN's tensor-core NHWC engines read 16-byte channel vectors (8 fp16/bf16 values); with C = 3
// (an image stem) they do not apply and slower engines run. A padded candidate instead convolves
// a copy of x as a packed NHWC [N, Cp, H, W] and of w as a packed KRSC [K, Cp, R, S], Cp = C
// rounded up to 8, channels c >= C zero: zero products change no sum, so y is the unpadded
// convolution's. One launch writes both copies, 16 bytes (one channel vector) per thread.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tensoracle::backends::cuda {

// One operand: the source [A, C, B1, B2] (x: [N, C, H, W]; w: [K, C, R, S]) read through its
// element strides, written packed as [A, B1, B2, Cp] to `padded`.
struct PadChannelsTensor {
  const void* data = nullptr;
  int64_t shape[4] = {};   // A, C, B1, B2
  int64_t stride[4] = {};  // elements, over the same dims
  void* padded = nullptr;  // 16-byte aligned
};

struct PadChannelsLaunch {
  int64_t padded_channels = 8;  // Cp: a multiple of 8, >= every operand's C
  PadChannelsTensor x, w;
};

// Copies x and w (2-byte elements: fp16 or bf16, moved as bits) into their padded buffers on
// `stream`. cudaErrorInvalidValue without launching when Cp is not a multiple of 8 or smaller
// than a C, or a padded pointer is not 16-byte aligned; cudaSuccess without launching when both
// are empty.
cudaError_t launch_pad_channels(const PadChannelsLaunch& args, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
