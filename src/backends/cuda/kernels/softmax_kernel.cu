#include "backends/cuda/kernels/pointwise_device.cuh"
#include "backends/cuda/kernels/softmax_kernel.h"

namespace tensoracle::backends::cuda {

namespace {

using device::from_float;
using device::KahanSum;
using device::MaxOp;
using device::RowGroup;
using device::SumOp;
using device::to_float;

// Rows cached in registers: kPer values per thread, element index rank + j * group size.
// Warps are launched 128 threads per block (row_launch); blocks with up to 1024.
template <typename S, int kPer, bool kWarp>
__global__ void __launch_bounds__(kWarp ? 128 : 1024) softmax_rows_cached(const S* __restrict__ x, S* __restrict__ y, int64_t rows,
                                                           int64_t size) {
  __shared__ float scratch[32];
  const RowGroup<kWarp> group;
  const int t = group.rank(), g = group.size();
  for (int64_t row = group.first_row(); row < rows; row += group.row_step()) {
    const S* in = x + row * size;
    S* out = y + row * size;
    float v[kPer];
    float max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = t + j * g;  // a cached row has at most 16384 elements
      v[j] = i < size ? to_float(in[i]) : -INFINITY;
      max = fmaxf(max, v[j]);
    }
    max = group.reduce(max, MaxOp(), -INFINITY, scratch);
    float sum = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = t + j * g;  // a cached row has at most 16384 elements
      if (i < size) {
        v[j] = expf(v[j] - max);
        sum += v[j];
      }
    }
    sum = group.reduce(sum, SumOp(), 0.0f, scratch);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = t + j * g;  // a cached row has at most 16384 elements
      if (i < size) out[i] = from_float<S>(v[j] / sum);
    }
  }
}

// Rows too long to cache: three passes over memory (max, sum, write) by a block per row.
template <typename S>
__global__ void __launch_bounds__(1024) softmax_rows_streamed(const S* __restrict__ x, S* __restrict__ y, int64_t rows,
                                                             int64_t size) {
  __shared__ float scratch[32];
  const RowGroup<false> group;
  const int t = group.rank(), g = group.size();
  for (int64_t row = group.first_row(); row < rows; row += group.row_step()) {
    const S* in = x + row * size;
    S* out = y + row * size;
    float max = -INFINITY;
    for (int64_t i = t; i < size; i += g) max = fmaxf(max, to_float(in[i]));
    max = group.reduce(max, MaxOp(), -INFINITY, scratch);
    KahanSum sum;
    for (int64_t i = t; i < size; i += g) sum.add(expf(to_float(in[i]) - max));
    const float total = group.reduce(sum.total(), SumOp(), 0.0f, scratch);
    for (int64_t i = t; i < size; i += g) out[i] = from_float<S>(expf(to_float(in[i]) - max) / total);
  }
}

// A thread per (outer, inner) line along a non-last axis.
template <typename S>
__global__ void softmax_columns(const S* __restrict__ x, S* __restrict__ y, SoftmaxShape s) {
  const int64_t lines = s.outer * s.inner;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < lines;
       line += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (line / s.inner) * s.size * s.inner + line % s.inner;
    float max = -INFINITY;
    for (int64_t i = 0; i < s.size; ++i) max = fmaxf(max, to_float(x[base + i * s.inner]));
    KahanSum sum;
    for (int64_t i = 0; i < s.size; ++i) sum.add(expf(to_float(x[base + i * s.inner]) - max));
    const float total = sum.total();
    for (int64_t i = 0; i < s.size; ++i)
      y[base + i * s.inner] = from_float<S>(expf(to_float(x[base + i * s.inner]) - max) / total);
  }
}

template <typename S, bool kWarp>
void launch_cached(const S* x, S* y, int64_t rows, int64_t size, const RowLaunch& r, unsigned blocks, cudaStream_t stream) {
  switch (r.per_thread) {
// Block rows cache 4..16 values per thread (row_launch), so only warps instantiate the rest.
#define TO_SOFTMAX_CASE(n)                                                                     \
  case n:                                                                                      \
    if constexpr (kWarp || (n >= 4 && n <= 16))                                                \
      softmax_rows_cached<S, n, kWarp><<<blocks, r.threads, 0, stream>>>(x, y, rows, size);   \
    break;
    TO_SOFTMAX_CASE(1)
    TO_SOFTMAX_CASE(2)
    TO_SOFTMAX_CASE(4)
    TO_SOFTMAX_CASE(8)
    TO_SOFTMAX_CASE(16)
    TO_SOFTMAX_CASE(32)
#undef TO_SOFTMAX_CASE
    default: softmax_rows_streamed<S><<<blocks, r.threads, 0, stream>>>(x, y, rows, size);
  }
}

template <typename S>
void launch_typed(const void* xv, void* yv, const SoftmaxShape& s, const RowLaunch& r, cudaStream_t stream) {
  const S* x = static_cast<const S*>(xv);
  S* y = static_cast<S*>(yv);
  if (s.inner != 1) {
    constexpr int kThreads = 256;
    softmax_columns<S><<<device::grid_for(s.outer * s.inner, kThreads), kThreads, 0, stream>>>(x, y, s);
    return;
  }
  const int64_t rows = s.outer;
  const int64_t rows_per_block = r.warp ? r.threads / 32 : 1;
  const unsigned blocks = device::grid_for(rows, static_cast<int>(rows_per_block));
  if (!r.warp && r.per_thread == 0) softmax_rows_streamed<S><<<blocks, r.threads, 0, stream>>>(x, y, rows, s.size);
  else if (r.warp) launch_cached<S, true>(x, y, rows, s.size, r, blocks, stream);
  else launch_cached<S, false>(x, y, rows, s.size, r, blocks, stream);
}

}  // namespace

cudaError_t launch_softmax(const void* x, void* y, DataType type, const SoftmaxShape& shape, const RowLaunch& rows,
                           cudaStream_t stream) {
  if (shape.outer * shape.size * shape.inner == 0) return cudaSuccess;
  // The row launch shape matters only for softmax over the innermost axis (columns use their own).
  if (shape.inner == 1 &&
      (rows.threads <= 0 || rows.threads % 32 || rows.threads > 1024 || (rows.warp && (rows.per_thread < 1 || rows.per_thread > 32))))
    return cudaErrorInvalidValue;
  switch (type) {
    case DataType::kFloat32: launch_typed<float>(x, y, shape, rows, stream); break;
    case DataType::kFloat16: launch_typed<__half>(x, y, shape, rows, stream); break;
    case DataType::kBFloat16: launch_typed<__nv_bfloat16>(x, y, shape, rows, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
