// Softmax kernels: exp(x - max) / sum along one axis of a linear fp32, fp16 or bf16 tensor viewed
// as [outer, size, inner]. inner == 1 (the last axis) runs the row kernels of `rows`; otherwise a
// thread per (outer, inner) line walks the axis (neighbouring threads read neighbouring memory).
// Arithmetic in fp32 with the reference's order of operations (src/backends/cpu/softmax.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/kernels/pointwise_rows.h"
#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct SoftmaxShape {
  int64_t outer = 1, size = 1, inner = 1;
};

// Launch status; nothing is launched for an empty tensor. `rows` is used when inner == 1.
cudaError_t launch_softmax(const void* x, void* y, DataType type, const SoftmaxShape& shape, const RowLaunch& rows,
                           cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
