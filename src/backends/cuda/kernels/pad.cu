#include "backends/cuda/kernels/data_movement_storage.cuh"
#include "backends/cuda/kernels/pad.h"

namespace tensoracle::backends::cuda {

namespace {

// The input coordinate read by output coordinate `o` of a dim, or -1 for the constant; the
// reference's rules (src/backends/cpu/shuffle.cpp).
__device__ __forceinline__ int64_t source_index(int64_t o, int64_t before, int64_t n, PadFill fill) {
  int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  switch (fill) {
    case PadFill::kConstant: return -1;
    case PadFill::kReflect: return i < 0 ? -i : 2 * (n - 1) - i;
    case PadFill::kReplicate: return i < 0 ? 0 : n - 1;
    case PadFill::kCircular: return ((i % n) + n) % n;
  }
  return -1;
}

template <typename W>
__global__ void pad_kernel(const W* __restrict__ in, W* __restrict__ out, PadArgs a) {
  const W value = static_cast<W>(a.value_bits);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, offset = 0;
    bool outside = false;
    for (int d = a.rank - 1; d >= 0; --d) {
      const int64_t o = rest % a.out_shape[d];
      rest /= a.out_shape[d];
      const int64_t src = source_index(o, a.pre[d], a.in_shape[d], a.fill);
      outside |= src < 0;
      offset += src * a.in_stride[d];
    }
    out[i] = outside ? value : in[offset];
  }
}

}  // namespace

cudaError_t launch_pad(const void* in, void* out, size_t element_size, const PadArgs& args, cudaStream_t stream) {
  if (args.count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const unsigned blocks = grid_blocks(args.count, kThreads);
  switch (element_size) {
    case 1: pad_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const Word<1>*>(in), static_cast<Word<1>*>(out), args); break;
    case 2: pad_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const Word<2>*>(in), static_cast<Word<2>*>(out), args); break;
    case 4: pad_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const Word<4>*>(in), static_cast<Word<4>*>(out), args); break;
    case 8: pad_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const Word<8>*>(in), static_cast<Word<8>*>(out), args); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
