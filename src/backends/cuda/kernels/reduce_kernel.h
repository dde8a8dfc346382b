// The reduce kernel: sum, mean, max, min or prod of a linear tensor over any set of axes, as
// src/backends/cpu/reduce.cpp defines them (NaN propagates through max and min; a mean of no
// elements is NaN; integers saturate to their type). Floating inputs (fp32, fp16, bf16)
// accumulate in fp32 with compensated sums, prod and integer inputs (int32, int64) in fp64.
//
// The host describes the input as kept dims (the output's elements, row-major) and reduced dims,
// each merged where memory allows. When the innermost input dim is reduced, a warp or a block
// reduces each output (neighbouring threads read neighbouring elements); otherwise each output
// is a column: a 32-wide tile of outputs per block with the reduced range split over 8 rows of
// threads.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensoracle/layers.h"
#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct ReduceArgs {
  static constexpr int kMaxRank = 8;
  ReduceOp op = ReduceOp::kSum;
  DataType type = DataType::kFloat32;  // input and output
  int64_t outputs = 0;                 // output elements
  int64_t count = 0;                   // input elements reduced into each output
  int kept_rank = 0;
  int64_t kept_shape[kMaxRank] = {};
  int64_t kept_stride[kMaxRank] = {};  // input elements
  int reduced_rank = 0;
  int64_t reduced_shape[kMaxRank] = {};
  int64_t reduced_stride[kMaxRank] = {};
};

enum class ReduceShape { kRows, kColumns };

// The kernel shape that suits `args` (kRows when the innermost input dim is reduced).
ReduceShape reduce_shape_for(const ReduceArgs& args);

cudaError_t launch_reduce(const void* x, void* y, const ReduceArgs& args, ReduceShape shape, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
