#include <cmath>

#include "backends/cuda/kernels/data_movement_storage.cuh"
#include "backends/cuda/kernels/pooling.h"

namespace tensoracle::backends::cuda {

namespace {

// One output's window: where it starts in the input, the in-bounds box and the divisor.
struct Window {
  int64_t base = 0, dst = 0;
  int64_t lo[3], hi[3];
  int64_t positions = 1;    // in-bounds positions
  int64_t padded_count = 1;  // the window clipped to the padded extent (count_include_pad)
};

__device__ __forceinline__ Window window_of(const PoolingArgs& a, int64_t t) {
  Window w;
  int64_t oc[3] = {0, 0, 0};
  for (int d = a.rank - 1; d >= 0; --d) {
    const int64_t c = t % a.extent[d];
    t /= a.extent[d];
    w.dst += c * a.out_stride[d];
    if (a.pooled[d] >= 0) oc[a.pooled[d]] = c;
    else w.base += c * a.in_stride[d];
  }
  for (int d = 0; d < 3; ++d) {
    const int64_t start = oc[d] * a.stride[d] - a.pre[d];
    const int64_t padded_end = min(start + a.window[d], a.in[d] + a.post[d]);
    w.padded_count *= padded_end - start;
    w.lo[d] = max(start, int64_t{0});
    w.hi[d] = min(start + a.window[d], a.in[d]);
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

template <typename Acc>
__device__ __forceinline__ Acc finish(Acc acc, const Window& w, const PoolingArgs& a) {
  if (a.is_max) return acc;
  return acc / static_cast<Acc>(a.count_include_pad ? w.padded_count : w.positions);
}

template <typename T>
__device__ __forceinline__ typename FloatStorage<T>::Acc read(const T* in, const Window& w, const PoolingArgs& a,
                                                               int64_t x, int64_t y, int64_t z) {
  return FloatStorage<T>::load(in[w.base + x * a.in_step[0] + y * a.in_step[1] + z * a.in_step[2]]);
}

template <typename T>
__global__ void pooling_thread_kernel(const T* __restrict__ in, T* __restrict__ out, PoolingArgs a) {
  using S = FloatStorage<T>;
  using Acc = typename S::Acc;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < a.count;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Window w = window_of(a, t);
    Acc acc = a.is_max ? static_cast<Acc>(-INFINITY) : Acc(0);
    for (int64_t x = w.lo[0]; x < w.hi[0]; ++x)
      for (int64_t y = w.lo[1]; y < w.hi[1]; ++y)
        for (int64_t z = w.lo[2]; z < w.hi[2]; ++z) acc = combine(acc, read(in, w, a, x, y, z), a.is_max);
    out[w.dst] = S::store(finish(acc, w, a));
  }
}

template <typename T>
__global__ void pooling_warp_kernel(const T* __restrict__ in, T* __restrict__ out, PoolingArgs a) {
  using S = FloatStorage<T>;
  using Acc = typename S::Acc;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; t < a.count; t += warps) {
    const Window w = window_of(a, t);
    const int64_t ny = w.hi[1] - w.lo[1], nz = w.hi[2] - w.lo[2];
    Acc acc = a.is_max ? static_cast<Acc>(-INFINITY) : Acc(0);
    for (int64_t q = lane; q < w.positions; q += 32)
      acc = combine(acc, read(in, w, a, w.lo[0] + q / (ny * nz), w.lo[1] + (q / nz) % ny, w.lo[2] + q % nz), a.is_max);
    for (int offset = 16; offset > 0; offset /= 2) {
      const Acc other = __shfl_down_sync(0xFFFFFFFFu, acc, offset);
      acc = a.is_max ? (isnan(acc) || isnan(other) ? (isnan(acc) ? acc : other) : (other > acc ? other : acc))
                     : acc + other;
    }
    if (lane == 0) out[w.dst] = S::store(finish(acc, w, a));
  }
}

template <typename T>
cudaError_t launch_typed(const void* in, void* out, const PoolingArgs& a, PoolingKernel kernel, cudaStream_t stream) {
  if (a.count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const T* src = static_cast<const T*>(in);
  T* dst = static_cast<T*>(out);
  if (kernel == PoolingKernel::kWarp)
    pooling_warp_kernel<T><<<grid_blocks(a.count * 32, kThreads), kThreads, 0, stream>>>(src, dst, a);
  else
    pooling_thread_kernel<T><<<grid_blocks(a.count, kThreads), kThreads, 0, stream>>>(src, dst, a);
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
