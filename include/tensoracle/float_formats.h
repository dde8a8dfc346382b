// Exact host conversions between fp32 and the narrow floating formats (fp16, bf16, fp8 e4m3 and
// e5m2), and element-wise conversion between any two DataTypes.
//
// Rounding: every narrowing conversion rounds to nearest, ties to even (IEEE 754 default).
// NaN: NaN inputs give a quiet NaN of the same sign (fp16 0x7E00-class, bf16 0x7FC0-class, e4m3
//   S.1111.111, e5m2 S.11111.10). Payload bits beyond "quiet" are not preserved.
// Overflow (|x| rounds above the largest finite value):
//   fp16, bf16, e5m2 -> ±inf (IEEE behaviour);
//   e4m3 has no infinity -> NaN, unless saturating.
// Saturating (Fp8Overflow::kSaturate, the mode of quantize layers, PTX cvt.satfinite and
//   TensorRT): overflow and ±inf give ±max finite (e4m3 ±448, e5m2 ±57344); NaN stays NaN.
// Underflow: results below the smallest subnormal round (ties to even) to a signed zero.
// Widening conversions (to fp32 or fp64) are exact.
#pragma once

#include <cstdint>
#include <cstring>

#include "tensoracle/types.h"

namespace tensoracle {

enum class Fp8Overflow { kNonSaturating, kSaturate };

namespace detail {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Shifts `value` right by `shift` (1..31) rounding to nearest, ties to even.
inline uint32_t shift_right_rne(uint32_t value, uint32_t shift) {
  const uint32_t quotient = value >> shift;
  const uint32_t remainder = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return quotient + ((remainder > half || (remainder == half && (quotient & 1))) ? 1 : 0);
}

// Encodes |f| (finite, non-NaN bits `abs_bits`) into a sign-less minifloat with `kExpBits`
// exponent bits, `kManBits` mantissa bits and bias 2^(kExpBits-1)-1. The result may exceed the
// format's largest finite code; callers handle overflow.
template <int kExpBits, int kManBits>
inline uint32_t encode_magnitude(uint32_t abs_bits) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr int kMinNormalExp = 1 - kBias;  // unbiased exponent of the smallest normal
  const int biased = static_cast<int>(abs_bits >> 23);
  if (biased == 0) return 0;  // fp32 subnormals are far below every target's subnormals
  const int exponent = biased - 127;
  const uint32_t significand = (abs_bits & 0x7FFFFFu) | 0x800000u;
  if (exponent >= kMinNormalExp) {
    // Normal: keep kManBits of the mantissa; a carry out of the mantissa bumps the exponent,
    // which is exactly the right encoding.
    const uint32_t code = (static_cast<uint32_t>(exponent + kBias) << 23 | (abs_bits & 0x7FFFFFu));
    return shift_right_rne(code, 23 - kManBits);
  }
  // Subnormal: value = significand * 2^(exponent-23); code = value / 2^(kMinNormalExp-kManBits).
  const int shift = (23 - kManBits) + (kMinNormalExp - exponent);
  if (shift > 24) return 0;  // below half the smallest subnormal (the tie also rounds to even 0)
  return shift_right_rne(significand, static_cast<uint32_t>(shift));
}

template <int kExpBits, int kManBits>
inline float decode_minifloat(uint32_t magnitude_code, bool negative) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  const uint32_t exponent = magnitude_code >> kManBits;
  const uint32_t mantissa = magnitude_code & ((1u << kManBits) - 1);
  float value;
  if (exponent == 0) {
    // Subnormal: mantissa * 2^(1 - bias - kManBits), exact in fp32 for every target format.
    value = static_cast<float>(mantissa) * bits_float(static_cast<uint32_t>(127 + 1 - kBias - kManBits) << 23);
  } else {
    value = bits_float((exponent - kBias + 127) << 23 | mantissa << (23 - kManBits));
  }
  return negative ? -value : value;
}

}  // namespace detail

// ---- fp16 (IEEE binary16) ----
inline uint16_t float_to_fp16(float f) {
  const uint32_t bits = detail::float_bits(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);
  const uint32_t code = abs_bits == 0x7F800000u ? 0x7C00u : detail::encode_magnitude<5, 10>(abs_bits);
  return static_cast<uint16_t>(sign | (code >= 0x7C00u ? 0x7C00u : code));
}
inline float fp16_to_float(uint16_t h) {
  const uint32_t magnitude = h & 0x7FFFu;
  const bool negative = (h & 0x8000u) != 0;
  if (magnitude >= 0x7C00u) {
    const uint32_t bits = (negative ? 0x80000000u : 0u) | 0x7F800000u | ((magnitude & 0x3FFu) << 13);
    return detail::bits_float(bits);  // inf, or NaN with its payload
  }
  return detail::decode_minifloat<5, 10>(magnitude, negative);
}

// ---- bf16 (the upper half of fp32) ----
inline uint16_t float_to_bf16(float f) {
  const uint32_t bits = detail::float_bits(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Rounding the low 16 bits to even; an overflow carries into the exponent and yields inf.
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
inline float bf16_to_float(uint16_t b) { return detail::bits_float(static_cast<uint32_t>(b) << 16); }

// ---- fp8 e4m3 (OCP "fn": no infinities; S.1111.111 is NaN; max finite 448) ----
inline uint8_t float_to_fp8e4m3(float f, Fp8Overflow overflow = Fp8Overflow::kNonSaturating) {
  const uint32_t bits = detail::float_bits(f);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return static_cast<uint8_t>(sign | 0x7Fu);
  constexpr uint32_t kMaxFinite = 0x7Eu;
  const uint32_t code = abs_bits == 0x7F800000u ? 0xFFu : detail::encode_magnitude<4, 3>(abs_bits);
  if (code > kMaxFinite)
    return static_cast<uint8_t>(sign | (overflow == Fp8Overflow::kSaturate ? kMaxFinite : 0x7Fu));
  return static_cast<uint8_t>(sign | code);
}
inline float fp8e4m3_to_float(uint8_t v) {
  const uint32_t magnitude = v & 0x7Fu;
  if (magnitude == 0x7Fu) return detail::bits_float((v & 0x80u ? 0x80000000u : 0u) | 0x7FC00000u);
  return detail::decode_minifloat<4, 3>(magnitude, (v & 0x80u) != 0);
}

// ---- fp8 e5m2 (OCP: IEEE-like, infinities S.11111.00, NaN S.11111.{01,10,11}; max 57344) ----
inline uint8_t float_to_fp8e5m2(float f, Fp8Overflow overflow = Fp8Overflow::kNonSaturating) {
  const uint32_t bits = detail::float_bits(f);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return static_cast<uint8_t>(sign | 0x7Eu);
  constexpr uint32_t kMaxFinite = 0x7Bu;
  const uint32_t code = abs_bits == 0x7F800000u ? 0xFFu : detail::encode_magnitude<5, 2>(abs_bits);
  if (code > kMaxFinite)
    return static_cast<uint8_t>(sign | (overflow == Fp8Overflow::kSaturate ? kMaxFinite : 0x7Cu));
  return static_cast<uint8_t>(sign | code);
}
inline float fp8e5m2_to_float(uint8_t v) {
  const uint32_t magnitude = v & 0x7Fu;
  const bool negative = (v & 0x80u) != 0;
  if (magnitude >= 0x7Cu) {
    return detail::bits_float((negative ? 0x80000000u : 0u) | 0x7F800000u | ((magnitude & 0x3u) << 21));
  }
  return detail::decode_minifloat<5, 2>(magnitude, negative);
}

// Reads element `index` of a `type` array as fp64 (exact for every type except 64-bit integers
// beyond 2^53, which round to nearest).
double load_as_double(DataType type, const void* data, size_t index);

// Converts `count` elements from `src` (of `src_type`) to `dst` (of `dst_type`). Floating
// narrowing follows the rules at the top of this file (fp8 non-saturating). Floating to integer
// truncates toward zero and saturates to the integer's range; NaN becomes 0; to bool, any
// non-zero value (NaN included) becomes 1. Integer to integer goes through int64 / uint64 without
// loss for values that fit and saturates otherwise.
void convert_elements(DataType src_type, const void* src, DataType dst_type, void* dst, size_t count);

}  // namespace tensoracle
