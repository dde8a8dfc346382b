#include "backends/cuda/kernels/data_movement_storage.cuh"
#include "backends/cuda/kernels/resize.h"

namespace tensoracle::backends::cuda {

namespace {

template <typename T>
__global__ void resize_kernel(const T* __restrict__ in, T* __restrict__ out, ResizeArgs a, int64_t count) {
  using S = FloatStorage<T>;
  using Acc = typename S::Acc;
  const int64_t in_size = a.in[0] * a.in[1] * a.in[2];
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = t % a.out[2], rest = t / a.out[2];
    const int64_t b = rest % a.out[1], rest2 = rest / a.out[1];
    const int64_t x = rest2 % a.out[0], p = rest2 / a.out[0];
    const ResizeTap ta = a.taps[x], tb = a.taps[a.out[0] + b], tc = a.taps[a.out[0] + a.out[1] + c];
    const T* plane = in + p * in_size;
    // The reference's blend: eight corners, skipping zero weights (so a non-finite neighbour
    // with weight 0 does not turn the result into NaN).
    Acc acc = 0;
    for (int corner = 0; corner < 8; ++corner) {
      const Acc wa = static_cast<Acc>(corner & 4 ? ta.w1 : 1 - ta.w1), wb = static_cast<Acc>(corner & 2 ? tb.w1 : 1 - tb.w1),
                wc = static_cast<Acc>(corner & 1 ? tc.w1 : 1 - tc.w1);
      const Acc w = wa * wb * wc;
      if (w == 0) continue;
      const int64_t ia = corner & 4 ? ta.i1 : ta.i0, ib = corner & 2 ? tb.i1 : tb.i0, ic = corner & 1 ? tc.i1 : tc.i0;
      acc += w * S::load(plane[(ia * a.in[1] + ib) * a.in[2] + ic]);
    }
    out[t] = S::store(acc);
  }
}

template <typename T>
cudaError_t launch_typed(const void* in, void* out, const ResizeArgs& a, cudaStream_t stream) {
  const int64_t count = a.planes * a.out[0] * a.out[1] * a.out[2];
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  resize_kernel<T><<<grid_blocks(count, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), a, count);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_resize(DataType type, const void* in, void* out, const ResizeArgs& args, cudaStream_t stream) {
  switch (type) {
    case DataType::kFloat32: return launch_typed<float>(in, out, args, stream);
    case DataType::kFloat16: return launch_typed<__half>(in, out, args, stream);
    case DataType::kBFloat16: return launch_typed<__nv_bfloat16>(in, out, args, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tensoracle::backends::cuda
