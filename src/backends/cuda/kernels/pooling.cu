#include <cmath>
#include <cstdlib>
#include <limits>

#include "backends/cuda/kernels/data_movement_storage.cuh"
#include "backends/cuda/kernels/pooling.h"

namespace tensoracle::backends::cuda {

namespace {

// One output's window: where it starts in the input, the in-bounds box and the divisor. Index is
// int32_t where every index fits (fits_int32 below), else int64_t.
template <typename Index>
struct Window {
  Index base = 0, dst = 0;
  Index lo[3], hi[3];
  Index positions = 1;     // in-bounds positions
  Index padded_count = 1;  // the window clipped to the padded extent (count_include_pad)
};

template <typename Index>
__device__ __forceinline__ Window<Index> window_of(const PoolingArgs& a, Index t) {
  Window<Index> w;
  Index oc[3] = {0, 0, 0};
  for (int d = a.rank - 1; d >= 0; --d) {
    const Index extent = static_cast<Index>(a.extent[d]);
    const Index c = t % extent;
    t /= extent;
    w.dst += c * static_cast<Index>(a.out_stride[d]);
    if (a.pooled[d] >= 0) oc[a.pooled[d]] = c;
    else w.base += c * static_cast<Index>(a.in_stride[d]);
  }
  for (int d = 0; d < 3; ++d) {
    const Index in = static_cast<Index>(a.in[d]), window = static_cast<Index>(a.window[d]);
    const Index start = oc[d] * static_cast<Index>(a.stride[d]) - static_cast<Index>(a.pre[d]);
    const Index padded_end = min(start + window, in + static_cast<Index>(a.post[d]));
    w.padded_count *= padded_end - start;
    w.lo[d] = max(start, Index{0});
    w.hi[d] = min(start + window, in);
    w.positions *= w.hi[d] > w.lo[d] ? w.hi[d] - w.lo[d] : 0;
  }
  return w;
}

// Max keeps the first NaN it sees (NaN propagates); average sums.
template <typename Acc>
__device__ __forceinline__ Acc combine(Acc acc, Acc v, bool is_max) {
  if (!is_max) return acc + v;
  return (v > acc || isnan(v)) && !isnan(acc) ? v : acc;
}

template <typename Acc, typename Index>
__device__ __forceinline__ Acc finish(Acc acc, const Window<Index>& w, const PoolingArgs& a) {
  if (a.is_max) return acc;
  return acc / static_cast<Acc>(a.count_include_pad ? w.padded_count : w.positions);
}

// The input index of window position (x, y, z).
template <typename Index>
__device__ __forceinline__ Index input_index(const Window<Index>& w, const PoolingArgs& a, Index x, Index y, Index z) {
  return w.base + x * static_cast<Index>(a.in_step[0]) + y * static_cast<Index>(a.in_step[1]) +
         z * static_cast<Index>(a.in_step[2]);
}

template <typename T, typename Index>
__global__ void pooling_thread_kernel(const T* __restrict__ in, T* __restrict__ out, PoolingArgs a) {
  using S = FloatStorage<T>;
  using Acc = typename S::Acc;
  const Index count = static_cast<Index>(a.count);
  for (Index t = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
       t += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Window<Index> w = window_of(a, t);
    Acc acc = a.is_max ? static_cast<Acc>(-INFINITY) : Acc(0);
    for (Index x = w.lo[0]; x < w.hi[0]; ++x)
      for (Index y = w.lo[1]; y < w.hi[1]; ++y)
        for (Index z = w.lo[2]; z < w.hi[2]; ++z) acc = combine(acc, S::load(in[input_index(w, a, x, y, z)]), a.is_max);
    out[w.dst] = S::store(finish(acc, w, a));
  }
}

// Channels innermost and contiguous on both sides (nhwc): `a` is in units of 16-byte vectors
// (vector_args), each thread pools kLanes neighbouring channels of one output position, with the
// same window walk and arithmetic per channel as pooling_thread_kernel.
template <typename T, typename Index>
__global__ void pooling_vector_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, PoolingArgs a) {
  using S = FloatStorage<T>;
  using Acc = typename S::Acc;
  constexpr int kLanes = sizeof(uint4) / sizeof(T);
  const Index count = static_cast<Index>(a.count);
  for (Index t = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
       t += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Window<Index> w = window_of(a, t);
    Acc acc[kLanes];
#pragma unroll
    for (int j = 0; j < kLanes; ++j) acc[j] = a.is_max ? static_cast<Acc>(-INFINITY) : Acc(0);
    for (Index x = w.lo[0]; x < w.hi[0]; ++x)
      for (Index y = w.lo[1]; y < w.hi[1]; ++y)
        for (Index z = w.lo[2]; z < w.hi[2]; ++z) {
          const uint4 v = in[input_index(w, a, x, y, z)];
          const T* lanes = reinterpret_cast<const T*>(&v);
#pragma unroll
          for (int j = 0; j < kLanes; ++j) acc[j] = combine(acc[j], S::load(lanes[j]), a.is_max);
        }
    uint4 r;
    T* results = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int j = 0; j < kLanes; ++j) results[j] = S::store(finish(acc[j], w, a));
    out[w.dst] = r;
  }
}

template <typename T>
__global__ void pooling_warp_kernel(const T* __restrict__ in, T* __restrict__ out, PoolingArgs a) {
  using S = FloatStorage<T>;
  using Acc = typename S::Acc;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; t < a.count; t += warps) {
    const Window<int64_t> w = window_of(a, t);
    const int64_t ny = w.hi[1] - w.lo[1], nz = w.hi[2] - w.lo[2];
    Acc acc = a.is_max ? static_cast<Acc>(-INFINITY) : Acc(0);
    for (int64_t q = lane; q < w.positions; q += 32)
      acc = combine(acc, S::load(in[input_index(w, a, w.lo[0] + q / (ny * nz), w.lo[1] + (q / nz) % ny, w.lo[2] + q % nz)]),
                    a.is_max);
    for (int offset = 16; offset > 0; offset /= 2) {
      const Acc other = __shfl_down_sync(0xFFFFFFFFu, acc, offset);
      acc = a.is_max ? (isnan(acc) || isnan(other) ? (isnan(acc) ? acc : other) : (other > acc ? other : acc))
                     : acc + other;
    }
    if (lane == 0) out[w.dst] = S::store(finish(acc, w, a));
  }
}

// Whether every index the kernels form (thread ids, input and output offsets, window bounds and
// counts) stays far inside int32: half its range, so a grid-stride step past the end cannot wrap.
bool fits_int32(const PoolingArgs& a) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max() / 2;
  int64_t in_reach = 0, out_reach = 0, max_oc[3] = {0, 0, 0};
  for (int k = 0; k < a.rank; ++k) {
    out_reach += (a.extent[k] - 1) * std::abs(a.out_stride[k]);
    if (a.pooled[k] >= 0) max_oc[a.pooled[k]] = a.extent[k] - 1;
    else in_reach += (a.extent[k] - 1) * std::abs(a.in_stride[k]);
  }
  int64_t window = 1;
  for (int d = 0; d < 3; ++d) {
    in_reach += (a.in[d] - 1) * std::abs(a.in_step[d]);
    window *= a.window[d];
    const int64_t bounds = max_oc[d] * a.stride[d] + std::abs(a.pre[d]) + a.window[d] + a.in[d] + std::abs(a.post[d]);
    if (a.window[d] > kLimit || a.stride[d] > kLimit || max_oc[d] > kLimit || bounds > kLimit) return false;
  }
  return a.count <= kLimit && in_reach <= kLimit && out_reach <= kLimit && window <= kLimit;
}

// `a` in units of 16-byte vectors of `lanes` elements, when the channels-last vector kernel
// applies: the innermost walked dim is not pooled, contiguous on both sides and a whole number of
// vectors; every other stride and both base addresses are whole vectors too.
bool vector_args(const PoolingArgs& a, int64_t lanes, const void* in, const void* out, PoolingArgs& v) {
  const int k = a.rank - 1;
  if (k < 0 || a.pooled[k] >= 0 || a.in_stride[k] != 1 || a.out_stride[k] != 1 || a.extent[k] % lanes != 0) return false;
  if (reinterpret_cast<uintptr_t>(in) % 16 != 0 || reinterpret_cast<uintptr_t>(out) % 16 != 0) return false;
  for (int d = 0; d < k; ++d)
    if (a.in_stride[d] % lanes != 0 || a.out_stride[d] % lanes != 0) return false;
  for (int d = 0; d < 3; ++d)
    if (a.in_step[d] % lanes != 0) return false;
  v = a;
  v.extent[k] /= lanes;
  for (int d = 0; d < k; ++d) {
    v.in_stride[d] /= lanes;
    v.out_stride[d] /= lanes;
  }
  for (int d = 0; d < 3; ++d) v.in_step[d] /= lanes;
  v.count /= lanes;
  return true;
}

template <typename T>
cudaError_t launch_typed(const void* in, void* out, const PoolingArgs& a, PoolingKernel kernel, cudaStream_t stream) {
  if (a.count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  if (kernel == PoolingKernel::kWarp) {
    pooling_warp_kernel<T><<<grid_blocks(a.count * 32, kThreads), kThreads, 0, stream>>>(src, dst, a);
    return cudaGetLastError();
  }
  const bool small = fits_int32(a);
  PoolingArgs v;
  if (vector_args(a, sizeof(uint4) / sizeof(T), in, out, v)) {
    const uint4* vin = static_cast<const uint4*>(in);
    uint4* vout = static_cast<uint4*>(out);
    if (small) pooling_vector_kernel<T, int32_t><<<grid_blocks(v.count, kThreads), kThreads, 0, stream>>>(vin, vout, v);
    else pooling_vector_kernel<T, int64_t><<<grid_blocks(v.count, kThreads), kThreads, 0, stream>>>(vin, vout, v);
  } else if (small) {
    pooling_thread_kernel<T, int32_t><<<grid_blocks(a.count, kThreads), kThreads, 0, stream>>>(src, dst, a);
  } else {
    pooling_thread_kernel<T, int64_t><<<grid_blocks(a.count, kThreads), kThreads, 0, stream>>>(src, dst, a);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_pooling(DataType type, const void* in, void* out, const PoolingArgs& args, PoolingKernel kernel,
                           cudaStream_t stream) {
  switch (type) {
    case DataType::kFloat32: return launch_typed<float>(in, out, args, kernel, stream);
    case DataType::kFloat16: return launch_typed<__half>(in, out, args, kernel, stream);
    case DataType::kBFloat16: return launch_typed<__nv_bfloat16>(in, out, args, kernel, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tensoracle::backends::cuda
