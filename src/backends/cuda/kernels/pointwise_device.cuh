// Device-side element access and rounding shared by the pointwise, softmax, reduce, norm and
// Q/DQ kernels. Every rule mirrors the CPU reference: loads widen exactly (64-bit integers round
// to nearest when read as fp64), and round_to applies round_to_type (src/backends/cpu/
// cpu_backend.cpp) in the compute type T (float or double): floating narrowing rounds to
// nearest even through fp32, integers truncate and saturate (NaN -> 0), bool is 0/1.
// The fp8 encoders are written out by hand after include/tensoracle/float_formats.h, so their
// rounding, overflow (e4m3 -> NaN, or +-448 saturating) and NaN rules are the host's exactly. On
// compute capability 8.9+ e4m3 converts with the hardware's instructions (cvt.rn.satfinite:
// nearest even into the subnormals, +-448 beyond the range), the NaN and non-saturating overflow
// cases decided first so that the rules stay the host's: the software encoder costs about 60
// integer instructions a value, which made an activation ending in an fp8 quantize compute-bound
// (BERT's GELU + quantize: 0.10 ms for 12.6 M values on an H100, docs/perf/gpu-log.md).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "tensoracle/types.h"

namespace tensoracle::backends::cuda::device {

// ---- fp8 (OCP e4m3 "fn" and e5m2), after float_formats.h ----

__device__ __forceinline__ uint32_t shift_right_rne(uint32_t value, uint32_t shift) {
  const uint32_t quotient = value >> shift;
  const uint32_t remainder = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return quotient + ((remainder > half || (remainder == half && (quotient & 1))) ? 1 : 0);
}

template <int kExpBits, int kManBits>
__device__ __forceinline__ uint32_t encode_magnitude(uint32_t abs_bits) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr int kMinNormalExp = 1 - kBias;
  const int biased = static_cast<int>(abs_bits >> 23);
  if (biased == 0) return 0;
  const int exponent = biased - 127;
  const uint32_t significand = (abs_bits & 0x7FFFFFu) | 0x800000u;
  if (exponent >= kMinNormalExp) {
    const uint32_t code = (static_cast<uint32_t>(exponent + kBias) << 23) | (abs_bits & 0x7FFFFFu);
    return shift_right_rne(code, 23 - kManBits);
  }
  const int shift = (23 - kManBits) + (kMinNormalExp - exponent);
  if (shift > 24) return 0;
  return shift_right_rne(significand, static_cast<uint32_t>(shift));
}

template <int kExpBits, int kManBits>
__device__ __forceinline__ float decode_minifloat(uint32_t magnitude_code, bool negative) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  const uint32_t exponent = magnitude_code >> kManBits;
  const uint32_t mantissa = magnitude_code & ((1u << kManBits) - 1);
  float value;
  if (exponent == 0)
    value = static_cast<float>(mantissa) * __uint_as_float(static_cast<uint32_t>(127 + 1 - kBias - kManBits) << 23);
  else
    value = __uint_as_float((exponent - kBias + 127) << 23 | mantissa << (23 - kManBits));
  return negative ? -value : value;
}

__device__ __forceinline__ uint8_t float_to_e4m3(float f, bool saturate) {
  const uint32_t bits = __float_as_uint(f);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return static_cast<uint8_t>(sign | 0x7Fu);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  // Beyond 464 (halfway from 448 to the NaN code, a tie that goes to 448's even mantissa) and at
  // infinity, a non-saturating conversion gives NaN; the instruction saturates everything else.
  if (!saturate && __uint_as_float(abs_bits) > 464.0f) return static_cast<uint8_t>(sign | 0x7Fu);
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3));
#else
  const uint32_t code = abs_bits == 0x7F800000u ? 0xFFu : encode_magnitude<4, 3>(abs_bits);
  if (code > 0x7Eu) return static_cast<uint8_t>(sign | (saturate ? 0x7Eu : 0x7Fu));
  return static_cast<uint8_t>(sign | code);
#endif
}
__device__ __forceinline__ float e4m3_to_float(uint8_t v) {
  const uint32_t magnitude = v & 0x7Fu;
  if (magnitude == 0x7Fu) return __uint_as_float((v & 0x80u ? 0x80000000u : 0u) | 0x7FC00000u);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(v, __NV_E4M3)));  // every e4m3 value is an fp16 one
#else
  return decode_minifloat<4, 3>(magnitude, (v & 0x80u) != 0);
#endif
}
// A quantize layer's int8 value of v = x / scale: rint (ties to even), saturated to
// [-128, 127], NaN -> 0.
__device__ __forceinline__ float int8_quantized(float v) {
  const float r = v != v ? 0.0f : rintf(v);
  return r < -128.0f ? -128.0f : r > 127.0f ? 127.0f : r;
}
// The byte a quantize layer stores for v = x / scale (quantize_kernel.h): int8 as
// int8_quantized; fp8 e4m3 nearest even, saturated to +-448.
__device__ __forceinline__ uint8_t quantized_code(float v, DataType type) {
  if (type == DataType::kFloat8E4M3) return float_to_e4m3(v, /*saturate=*/true);
  return static_cast<uint8_t>(static_cast<int8_t>(int8_quantized(v)));
}
__device__ __forceinline__ void store_quantized(void* y, int64_t i, DataType type, float v) {
  static_cast<uint8_t*>(y)[i] = quantized_code(v, type);
}
// The value store_quantized stores, as a float (exact: every int8 and e4m3 value is one).
__device__ __forceinline__ float quantized_value(float v, DataType type) {
  return type == DataType::kFloat8E4M3 ? e4m3_to_float(float_to_e4m3(v, /*saturate=*/true)) : int8_quantized(v);
}
__device__ __forceinline__ uint8_t float_to_e5m2(float f) {
  const uint32_t bits = __float_as_uint(f);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return static_cast<uint8_t>(sign | 0x7Eu);
  const uint32_t code = abs_bits == 0x7F800000u ? 0xFFu : encode_magnitude<5, 2>(abs_bits);
  if (code > 0x7Bu) return static_cast<uint8_t>(sign | 0x7Cu);
  return static_cast<uint8_t>(sign | code);
}
__device__ __forceinline__ float e5m2_to_float(uint8_t v) {
  const uint32_t magnitude = v & 0x7Fu;
  const bool negative = (v & 0x80u) != 0;
  if (magnitude >= 0x7Cu)
    return __uint_as_float((negative ? 0x80000000u : 0u) | 0x7F800000u | ((magnitude & 0x3u) << 21));
  return decode_minifloat<5, 2>(magnitude, negative);
}

// ---- fp16 and bf16 with the host's NaN encodings ----
// The hardware conversions round to nearest even like float_formats.h, but write their own NaN;
// these give the host's (fp16 sign|0x7E00, bf16 the upper half with the quiet bit set), so
// stored tensors compare bit for bit with the reference's.
__device__ __forceinline__ __half to_half(float v) {
  if (v != v) return __ushort_as_half(static_cast<unsigned short>(((__float_as_uint(v) >> 16) & 0x8000u) | 0x7E00u));
  return __float2half_rn(v);
}
__device__ __forceinline__ __nv_bfloat16 to_bf16(float v) {
  if (v != v) return __ushort_as_bfloat16(static_cast<unsigned short>((__float_as_uint(v) >> 16) | 0x0040u));
  return __float2bfloat16_rn(v);
}

// ---- any type <-> compute type ----

// Element `i` of `p` (of `type`) in compute type T.
template <typename T>
__device__ __forceinline__ T load(const void* p, int64_t i, DataType type) {
  switch (type) {
    case DataType::kFloat32: return static_cast<T>(static_cast<const float*>(p)[i]);
    case DataType::kFloat16: return static_cast<T>(__half2float(static_cast<const __half*>(p)[i]));
    case DataType::kBFloat16: return static_cast<T>(__bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]));
    case DataType::kFloat8E4M3: return static_cast<T>(e4m3_to_float(static_cast<const uint8_t*>(p)[i]));
    case DataType::kFloat8E5M2: return static_cast<T>(e5m2_to_float(static_cast<const uint8_t*>(p)[i]));
    case DataType::kFloat64: return static_cast<T>(static_cast<const double*>(p)[i]);
    case DataType::kInt8: return static_cast<T>(static_cast<const int8_t*>(p)[i]);
    case DataType::kUInt8: return static_cast<T>(static_cast<const uint8_t*>(p)[i]);
    case DataType::kInt16: return static_cast<T>(static_cast<const int16_t*>(p)[i]);
    case DataType::kUInt16: return static_cast<T>(static_cast<const uint16_t*>(p)[i]);
    case DataType::kInt32: return static_cast<T>(static_cast<const int32_t*>(p)[i]);
    case DataType::kUInt32: return static_cast<T>(static_cast<const uint32_t*>(p)[i]);
    case DataType::kInt64: return static_cast<T>(static_cast<const long long*>(p)[i]);
    case DataType::kUInt64: return static_cast<T>(static_cast<const unsigned long long*>(p)[i]);
    case DataType::kBool: return static_cast<const uint8_t*>(p)[i] != 0 ? T(1) : T(0);
  }
  return T(0);
}

__device__ __forceinline__ float truncate(float v) { return truncf(v); }
__device__ __forceinline__ double truncate(double v) { return trunc(v); }

template <typename T>
__device__ __forceinline__ T saturate_integer(T v, T lo, T hi) {
  if (v != v) return T(0);  // NaN
  return truncate(v < lo ? lo : v > hi ? hi : v);
}

// `v` rounded to a value representable in `type` (the CPU's round_to_type).
template <typename T>
__device__ __forceinline__ T round_to(T v, DataType type) {
  switch (type) {
    case DataType::kFloat64: return v;
    case DataType::kFloat32: return static_cast<T>(static_cast<float>(v));
    case DataType::kFloat16: return static_cast<T>(__half2float(__float2half_rn(static_cast<float>(v))));
    case DataType::kBFloat16: return static_cast<T>(__bfloat162float(__float2bfloat16_rn(static_cast<float>(v))));
    case DataType::kFloat8E4M3: return static_cast<T>(e4m3_to_float(float_to_e4m3(static_cast<float>(v), false)));
    case DataType::kFloat8E5M2: return static_cast<T>(e5m2_to_float(float_to_e5m2(static_cast<float>(v))));
    case DataType::kBool: return v != T(0) ? T(1) : T(0);  // NaN != 0: true
    case DataType::kInt8: return saturate_integer<T>(v, T(-128), T(127));
    case DataType::kUInt8: return saturate_integer<T>(v, T(0), T(255));
    case DataType::kInt16: return saturate_integer<T>(v, T(-32768), T(32767));
    case DataType::kUInt16: return saturate_integer<T>(v, T(0), T(65535));
    case DataType::kInt32: return saturate_integer<T>(v, T(-2147483648.0), T(2147483647.0));
    case DataType::kUInt32: return saturate_integer<T>(v, T(0), T(4294967295.0));
    case DataType::kInt64: return saturate_integer<T>(v, T(-9223372036854775808.0), T(9223372036854774784.0));
    case DataType::kUInt64: return saturate_integer<T>(v, T(0), T(18446744073709549568.0));
  }
  return v;
}

// Writes `v`, already representable in `type` (round_to), as element `i` of `p`.
template <typename T>
__device__ __forceinline__ void store(void* p, int64_t i, DataType type, T v) {
  switch (type) {
    case DataType::kFloat32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case DataType::kFloat16: static_cast<__half*>(p)[i] = to_half(static_cast<float>(v)); return;
    case DataType::kBFloat16: static_cast<__nv_bfloat16*>(p)[i] = to_bf16(static_cast<float>(v)); return;
    case DataType::kFloat8E4M3: static_cast<uint8_t*>(p)[i] = float_to_e4m3(static_cast<float>(v), false); return;
    case DataType::kFloat8E5M2: static_cast<uint8_t*>(p)[i] = float_to_e5m2(static_cast<float>(v)); return;
    case DataType::kFloat64: static_cast<double*>(p)[i] = static_cast<double>(v); return;
    case DataType::kInt8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case DataType::kUInt8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return;
    case DataType::kInt16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return;
    case DataType::kUInt16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); return;
    case DataType::kInt32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case DataType::kUInt32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); return;
    case DataType::kInt64: static_cast<long long*>(p)[i] = static_cast<long long>(v); return;
    case DataType::kUInt64: static_cast<unsigned long long*>(p)[i] = static_cast<unsigned long long>(v); return;
    case DataType::kBool: static_cast<uint8_t*>(p)[i] = v != T(0) ? 1 : 0; return;
  }
}

// Floating storage types the row kernels template on (fp32, fp16, bf16), computed in fp32.
template <typename S>
__device__ __forceinline__ float to_float(S v);
template <>
__device__ __forceinline__ float to_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename S>
__device__ __forceinline__ S from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return to_half(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return to_bf16(v); }

// ---- reductions within a warp and a block ----

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {  // ignores NaN like fmaxf; callers that must propagate NaN track it apart
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <typename Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  return v;
}

// The reduction of `v` over the block, returned to every thread. `scratch` holds 32 floats;
// blockDim.x is a multiple of 32. Ends with a barrier, so scratch may be reused right after.
template <typename Op>
__device__ __forceinline__ float block_reduce(float v, Op op, float identity, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_reduce(v, op);
  if (warps == 1) return v;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : identity;
  v = warp_reduce(v, op);
  __syncthreads();
  return v;
}

// Compensated (Kahan) summation for the long sequential sums of one thread, so a line of many
// thousands of fp32 terms loses no more than a few ulps; total() is the corrected sum.
struct KahanSum {
  float sum = 0, carry = 0;
  __device__ __forceinline__ void add(float v) {
    const float y = v - carry;
    const float t = sum + y;
    if (isfinite(t)) carry = (t - sum) - y;  // once infinite, the sum stays what plain addition gives
    sum = t;
  }
  __device__ __forceinline__ float total() const { return isfinite(sum) ? sum - carry : sum; }
};

// The threads that share one row: a warp (kWarp; a block holds blockDim.x / 32 rows at a time)
// or the whole block. Rows are walked grid-stride; every thread of a group walks the same rows,
// so the block barriers inside reduce() are reached by all.
template <bool kWarp>
struct RowGroup {
  __device__ __forceinline__ int rank() const { return kWarp ? (threadIdx.x & 31) : threadIdx.x; }
  __device__ __forceinline__ int size() const { return kWarp ? 32 : blockDim.x; }
  __device__ __forceinline__ int64_t first_row() const {
    return kWarp ? static_cast<int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5) : blockIdx.x;
  }
  __device__ __forceinline__ int64_t row_step() const {
    return kWarp ? static_cast<int64_t>(gridDim.x) * (blockDim.x >> 5) : gridDim.x;
  }
  template <typename Op>
  __device__ __forceinline__ float reduce(float v, Op op, float identity, float* scratch) const {
    if (kWarp) return warp_reduce(v, op);
    return block_reduce(v, op, identity, scratch);
  }
};

// Blocks for a grid-stride loop over `count` items, `threads` per block: enough to fill the GPU,
// few enough that huge tensors loop rather than launch millions of blocks.
inline unsigned grid_for(int64_t count, int threads) {
  const int64_t blocks = (count + threads - 1) / threads;
  constexpr int64_t kMaxBlocks = 65535LL * 8;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace tensoracle::backends::cuda::device
