// The channel-padding copy of conv_pad_channels.h: one thread per 16-byte output vector.
#include <cstdint>
#include <limits>

#include "backends/cuda/cudnn/conv_device.cuh"
#include "backends/cuda/cudnn/conv_pad_channels.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr int64_t kVectorChannels = 8;  // 2-byte elements per 16-byte vector

// One operand in the kernel's index type I (32-bit when every index and offset fits).
template <typename I>
struct Operand {
  const uint16_t* src;
  uint4* dst;
  I a, c, b1, b2;         // source dims [A, C, B1, B2]
  I sa, sc, sb1, sb2;     // their element strides
  I vectors;              // A * B1 * B2 * (Cp / 8): the 16-byte vectors written
};

// Output vector i of `t` (vector `i % q` of pixel `i / q`, q = Cp / 8): channels 8v .. 8v+7 of
// that pixel, zero for c >= C. Constant indices into `word` keep it in registers.
template <typename I>
__device__ __forceinline__ void pad_vector(const Operand<I>& t, I i, I q) {
  const I v = i % q;
  I pixel = i / q;
  const I b2 = pixel % t.b2;
  pixel /= t.b2;
  const I b1 = pixel % t.b1;
  const I a = pixel / t.b1;
  const uint16_t* src = t.src + (a * t.sa + b1 * t.sb1 + b2 * t.sb2);
  const I c0 = v * static_cast<I>(kVectorChannels);
  uint32_t word[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const I c = c0 + static_cast<I>(2 * j);
    const uint32_t lo = c < t.c ? src[c * t.sc] : 0u;
    const uint32_t hi = c + 1 < t.c ? src[(c + 1) * t.sc] : 0u;
    word[j] = lo | (hi << 16);
  }
  t.dst[i] = make_uint4(word[0], word[1], word[2], word[3]);
}

template <typename I>
__global__ void pad_channels_kernel(Operand<I> x, Operand<I> w, I q) {
  const I total = x.vectors + w.vectors;
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    if (i < x.vectors) pad_vector(x, i, q);
    else pad_vector(w, i - x.vectors, q);
  }
}

int64_t vectors_of(const PadChannelsTensor& t, int64_t q) { return t.shape[0] * t.shape[2] * t.shape[3] * q; }

// The largest element offset read from `t` (0 when it is empty).
int64_t max_offset(const PadChannelsTensor& t) {
  int64_t off = 0;
  for (int d = 0; d < 4; ++d) {
    if (t.shape[d] == 0) return 0;
    off += (t.shape[d] - 1) * t.stride[d];
  }
  return off;
}

template <typename I>
Operand<I> operand(const PadChannelsTensor& t, int64_t q) {
  return {static_cast<const uint16_t*>(t.data), static_cast<uint4*>(t.padded),
          static_cast<I>(t.shape[0]), static_cast<I>(t.shape[1]), static_cast<I>(t.shape[2]), static_cast<I>(t.shape[3]),
          static_cast<I>(t.stride[0]), static_cast<I>(t.stride[1]), static_cast<I>(t.stride[2]), static_cast<I>(t.stride[3]),
          static_cast<I>(vectors_of(t, q))};
}

template <typename I>
void launch(const PadChannelsLaunch& args, int64_t q, int64_t total, cudaStream_t stream) {
  constexpr int kThreads = 256;
  pad_channels_kernel<I><<<conv_device::grid_for(total, kThreads), kThreads, 0, stream>>>(
      operand<I>(args.x, q), operand<I>(args.w, q), static_cast<I>(q));
}

}  // namespace

cudaError_t launch_pad_channels(const PadChannelsLaunch& args, cudaStream_t stream) {
  const int64_t cp = args.padded_channels;
  if (cp <= 0 || cp % kVectorChannels != 0) return cudaErrorInvalidValue;
  for (const PadChannelsTensor* t : {&args.x, &args.w})
    if (t->shape[1] > cp || reinterpret_cast<uintptr_t>(t->padded) % 16 != 0) return cudaErrorInvalidValue;
  const int64_t q = cp / kVectorChannels;
  const int64_t total = vectors_of(args.x, q) + vectors_of(args.w, q);
  if (total == 0) return cudaSuccess;
  // 32-bit indices when the vector count (plus a grid stride) and every offset read fit in 31 bits.
  constexpr int64_t k31 = std::numeric_limits<int32_t>::max();
  if (total < k31 / 2 && max_offset(args.x) < k31 && max_offset(args.w) < k31)
    launch<uint32_t>(args, q, total, stream);
  else
    launch<uint64_t>(args, q, total, stream);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
