#include "backends/cuda/kernels/data_movement_storage.cuh"
#include "backends/cuda/kernels/gather.h"

namespace tensoracle::backends::cuda {

namespace {

template <typename W, typename I>
__global__ void gather_kernel(const W* __restrict__ data, const I* __restrict__ indices, W* __restrict__ out,
                              GatherArgs a, int64_t count) {
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t % a.inner, row = t / a.inner;
    const int64_t j = row % a.indices, o = row / a.indices;
    int64_t index = static_cast<int64_t>(indices[j]);
    if (index < 0) index += a.axis_size;
    index = index < 0 ? 0 : (index >= a.axis_size ? a.axis_size - 1 : index);
    out[t] = data[(o * a.axis_size + index) * a.inner + i];
  }
}

template <typename W>
void launch_words(const void* data, const void* indices, bool index64, void* out, GatherArgs a, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t count = a.outer * a.indices * a.inner;
  const unsigned blocks = grid_blocks(count, kThreads);
  if (index64)
    gather_kernel<W, int64_t><<<blocks, kThreads, 0, stream>>>(
        static_cast<const W*>(data), static_cast<const int64_t*>(indices), static_cast<W*>(out), a, count);
  else
    gather_kernel<W, int32_t><<<blocks, kThreads, 0, stream>>>(
        static_cast<const W*>(data), static_cast<const int32_t*>(indices), static_cast<W*>(out), a, count);
}

}  // namespace

cudaError_t launch_gather(const void* data, const void* indices, bool index64, void* out, size_t element_size,
                          const GatherArgs& args, cudaStream_t stream) {
  if (args.outer * args.indices * args.inner == 0) return cudaSuccess;
  if (args.axis_size <= 0) return cudaErrorInvalidValue;
  // The widest word that divides a row and both buffers' alignment.
  const int64_t row_bytes = args.inner * static_cast<int64_t>(element_size);
  const uintptr_t alignment = reinterpret_cast<uintptr_t>(data) | reinterpret_cast<uintptr_t>(out);
  size_t word = element_size;
  for (size_t w : {size_t{16}, size_t{8}, size_t{4}, size_t{2}})
    if (w > word && row_bytes % static_cast<int64_t>(w) == 0 && alignment % w == 0) {
      word = w;
      break;
    }
  GatherArgs a = args;
  a.inner = row_bytes / static_cast<int64_t>(word);
  switch (word) {
    case 1: launch_words<Word<1>>(data, indices, index64, out, a, stream); break;
    case 2: launch_words<Word<2>>(data, indices, index64, out, a, stream); break;
    case 4: launch_words<Word<4>>(data, indices, index64, out, a, stream); break;
    case 8: launch_words<Word<8>>(data, indices, index64, out, a, stream); break;
    case 16: launch_words<Word<16>>(data, indices, index64, out, a, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
