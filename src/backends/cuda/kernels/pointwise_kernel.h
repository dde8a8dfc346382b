// The pointwise interpreter kernel: one thread per output element runs a whole PointwiseProgram
// (pointwise_program.h) held in the kernel's parameters. Host code builds the arguments with
// PointwiseLaunch (pointwise_launch.h); this header is the plain-data contract between the two.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/pointwise_program.h"

namespace tensoracle::backends::cuda {

constexpr int kMaxPointwiseInputs = 16;
constexpr int kMaxPointwiseInstrs = 32;
constexpr int kMaxPointwiseRank = 8;

struct PointwiseKernelInstr {
  PointwiseCode code = PointwiseCode::kCast;
  DataType type = DataType::kFloat32;  // the result is rounded to this type
  int8_t a = 0, b = 0, c = 0;          // source registers (unused ones are 0)
  double alpha = 0, beta = 0;
};

struct PointwiseKernelArgs {
  int num_inputs = 0;
  int num_instrs = 0;
  bool fp64 = false;  // compute type: fp64, else fp32
  // The output's elements in row-major order of `shape` (dims merged where every tensor allows;
  // rank 0 or 1 takes the kernel's flat path). Strides are in elements; 0 broadcasts.
  int rank = 0;
  int64_t count = 0;
  int64_t shape[kMaxPointwiseRank] = {};
  int64_t out_stride[kMaxPointwiseRank] = {};
  int64_t in_stride[kMaxPointwiseInputs][kMaxPointwiseRank] = {};
  DataType in_type[kMaxPointwiseInputs] = {};
  DataType out_type = DataType::kFloat32;
  const void* in[kMaxPointwiseInputs] = {};
  void* out = nullptr;
  PointwiseKernelInstr instrs[kMaxPointwiseInstrs] = {};
};

// Launches the kernel with `threads` per block (a multiple of 32, at most 512); returns the
// launch status. Nothing is launched when args.count is 0.
cudaError_t launch_pointwise_kernel(const PointwiseKernelArgs& args, int threads, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
