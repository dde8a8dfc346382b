// Normalization kernels on linear fp32, fp16 or bf16 tensors; parameters (scale, bias, mean,
// variance) have the input's type. Statistics in fp32 with two passes over values cached in
// registers (the mean, then the biased variance of the deviations from it; values are held
// relative to the row's first element so that a large common offset costs no precision),
// as src/backends/cpu/normalization.cpp computes them in fp64; rows too long to cache stream
// from memory with compensated sums. The vector path (norm_vectors_per_thread) computes the same
// statistics the same way; only the order of the per-thread partial sums differs.
//
// launch_norm covers layer norm and RMS norm (rows = the trailing dims from the axis, the affine
// index is the position in the row) and group and instance norm (rows = the channels of one
// group of one image, contiguous in NCHW; the affine index is the channel).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/kernels/pointwise_rows.h"
#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct NormArgs {
  int64_t rows = 0, size = 0;  // `rows` contiguous rows of `size` elements
  float epsilon = 0;
  bool rms = false;  // x / sqrt(mean(x^2) + eps): no mean subtracted, no bias
  // Affine index of element i of row r: i when groups == 0, else
  // (r % groups) * channels_per_group + i / spatial.
  int64_t groups = 0, channels_per_group = 0, spatial = 1;
  const void* scale = nullptr;  // nullptr: none
  const void* bias = nullptr;
  // A quantized copy of the output (step.h, FusedQuantization::copy): codes[i] is what a
  // quantize layer stores for y[i] as written (y's type) / code_scale[0] (quantize_kernel.h).
  void* codes = nullptr;  // nullptr: none
  const void* code_scale = nullptr;
  DataType code_type = DataType::kInt8;  // int8 or fp8e4m3
  DataType code_scale_type = DataType::kFloat32;
};

// Rows of whole 16-byte vectors (a multiple of 8 fp16/bf16 or 4 fp32 elements) of layer or RMS
// norm, with x, y, scale and bias 16-byte aligned and codes aligned to one vector's codes, take
// a vector kernel: each thread caches whole vectors (as many values as the scalar kernels cache
// at most) and loads and stores them whole. The vectors each thread caches for this launch, or 0
// where the scalar kernels run.
int norm_vectors_per_thread(const void* x, const void* y, DataType type, const NormArgs& args, const RowLaunch& rows);

cudaError_t launch_norm(const void* x, void* y, DataType type, const NormArgs& args, const RowLaunch& rows,
                        cudaStream_t stream);

// Inference batch norm: y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c], where the
// channel of flat element i is (i / inner) % channels (inner = the spatial size for linear
// [N, C, ...] tensors, 1 for nhwc).
struct BatchNormArgs {
  int64_t count = 0, channels = 1, inner = 1;
  float epsilon = 0;
  const void* scale = nullptr;
  const void* bias = nullptr;
  const void* mean = nullptr;
  const void* variance = nullptr;
};

cudaError_t launch_batch_norm(const void* x, void* y, DataType type, const BatchNormArgs& args, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
