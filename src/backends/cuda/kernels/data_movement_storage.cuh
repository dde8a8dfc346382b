// Device-side element access shared by the data-movement kernels.
//
// Word<N>: an N-byte unit for type-agnostic moves (any data type of that size).
// FloatStorage<T>: a floating storage type (fp32, fp16, bf16) read into and written from its
// compute type. fp32 computes in fp64, as the CPU reference does, so fp32 results round once from
// the reference's own value; fp16 and bf16 compute in fp32 (storage-only types).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

namespace tensoracle::backends::cuda {

template <size_t N>
struct WordOf;
template <>
struct WordOf<1> { using type = uint8_t; };
template <>
struct WordOf<2> { using type = uint16_t; };
template <>
struct WordOf<4> { using type = uint32_t; };
template <>
struct WordOf<8> { using type = unsigned long long; };
template <>
struct WordOf<16> { using type = uint4; };
template <size_t N>
using Word = typename WordOf<N>::type;

template <typename T>
struct FloatStorage;
template <>
struct FloatStorage<float> {
  using Acc = double;
  static __device__ __forceinline__ double load(float v) { return static_cast<double>(v); }
  static __device__ __forceinline__ float store(double v) { return __double2float_rn(v); }
};
template <>
struct FloatStorage<__half> {
  using Acc = float;
  static __device__ __forceinline__ float load(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half store(float v) { return __float2half_rn(v); }
};
template <>
struct FloatStorage<__nv_bfloat16> {
  using Acc = float;
  static __device__ __forceinline__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

// Blocks for a grid-stride loop over `count` items of `threads` each, capped so that very large
// tensors loop instead of launching millions of blocks.
inline unsigned grid_blocks(int64_t count, int threads) {
  const int64_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65535 * 4 ? (blocks < 1 ? 1 : blocks) : 65535 * 4);
}

}  // namespace tensoracle::backends::cuda
