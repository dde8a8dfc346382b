#include "backends/cuda/kernels/data_movement_storage.cuh"
#include "backends/cuda/kernels/grid_sample.h"

namespace tensoracle::backends::cuda {

namespace {

// Normalized [-1, 1] -> pixel coordinate; border padding clamps into the image.
template <typename Acc>
__device__ __forceinline__ Acc unnormalize(Acc v, int64_t size, bool align, bool border) {
  const Acc s = static_cast<Acc>(size);
  Acc p = align ? (v + 1) / 2 * (s - 1) : ((v + 1) * s - 1) / 2;
  if (border) p = fmin(s - 1, fmax(Acc(0), p));
  return p;
}

template <typename T>
__global__ void grid_sample_kernel(const T* __restrict__ in, const T* __restrict__ grid, T* __restrict__ out,
                                   GridSampleArgs a, int64_t count) {
  using S = FloatStorage<T>;
  using Acc = typename S::Acc;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ow = t % a.out_w, oh = (t / a.out_w) % a.out_h, plane = t / (a.out_w * a.out_h);
    const int64_t b = plane / a.c;
    const T* g = grid + ((b * a.out_h + oh) * a.out_w + ow) * 2;
    const Acc ix = unnormalize(S::load(g[0]), a.w, a.align_corners, a.border);
    const Acc iy = unnormalize(S::load(g[1]), a.h, a.align_corners, a.border);
    const T* src = in + plane * a.h * a.w;
    // A tap outside the image (or at a coordinate too far away to be an index) reads 0.
    auto at = [&](Acc yy, Acc xx) -> Acc {
      return (yy >= 0 && yy < static_cast<Acc>(a.h) && xx >= 0 && xx < static_cast<Acc>(a.w))
                 ? S::load(src[static_cast<int64_t>(yy) * a.w + static_cast<int64_t>(xx)])
                 : Acc(0);
    };
    Acc v;
    if (!isfinite(ix) || !isfinite(iy)) {
      v = static_cast<Acc>(NAN);
    } else if (a.nearest) {
      v = at(rint(iy), rint(ix));  // round half to even
    } else {
      const Acc x0 = floor(ix), y0 = floor(iy);
      const Acc ax = ix - x0, ay = iy - y0;
      v = at(y0, x0) * (1 - ax) * (1 - ay) + at(y0, x0 + 1) * ax * (1 - ay) + at(y0 + 1, x0) * (1 - ax) * ay +
          at(y0 + 1, x0 + 1) * ax * ay;
    }
    out[t] = S::store(v);
  }
}

template <typename T>
cudaError_t launch_typed(const void* in, const void* grid, void* out, const GridSampleArgs& a, cudaStream_t stream) {
  const int64_t count = a.n * a.c * a.out_h * a.out_w;
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  grid_sample_kernel<T><<<grid_blocks(count, kThreads), kThreads, 0, stream>>>(
      static_cast<const T*>(in), static_cast<const T*>(grid), static_cast<T*>(out), a, count);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_grid_sample(DataType type, const void* in, const void* grid, void* out, const GridSampleArgs& args,
                               cudaStream_t stream) {
  switch (type) {
    case DataType::kFloat32: return launch_typed<float>(in, grid, out, args, stream);
    case DataType::kFloat16: return launch_typed<__half>(in, grid, out, args, stream);
    case DataType::kBFloat16: return launch_typed<__nv_bfloat16>(in, grid, out, args, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tensoracle::backends::cuda
