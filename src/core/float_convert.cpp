#include <cmath>
#include <cstring>
#include <limits>

#include "tensoracle/float_formats.h"

namespace tensoracle {
namespace {

template <typename T>
T load(const void* data, size_t index) {
  T value;
  std::memcpy(&value, static_cast<const char*>(data) + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void store(void* data, size_t index, T value) {
  std::memcpy(static_cast<char*>(data) + index * sizeof(T), &value, sizeof(T));
}

// Floating value to integer T: truncate toward zero, saturate, NaN -> 0.
template <typename T>
T saturate_float(double value) {
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  if (truncated <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  // max() of 64-bit types is not representable in double; compare against 2^bits instead.
  if (truncated >= std::ldexp(1.0, std::numeric_limits<T>::digits)) return std::numeric_limits<T>::max();
  return static_cast<T>(truncated);
}

template <typename T>
T saturate_int(int64_t value) {
  if constexpr (std::is_signed_v<T>) {
    if (value < static_cast<int64_t>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (value > static_cast<int64_t>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  } else {
    if (value < 0) return 0;
    if (static_cast<uint64_t>(value) > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
  }
  return static_cast<T>(value);
}

template <typename T>
T saturate_uint(uint64_t value) {
  if (value > static_cast<uint64_t>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(value);
}

bool is_unsigned_integer(DataType type) { return is_integer(type) && !is_signed(type); }

// An integer element widened losslessly to int64 (signed) or uint64 (unsigned).
int64_t load_signed(DataType type, const void* data, size_t i) {
  switch (type) {
    case DataType::kInt8: return load<int8_t>(data, i);
    case DataType::kInt16: return load<int16_t>(data, i);
    case DataType::kInt32: return load<int32_t>(data, i);
    case DataType::kInt64: return load<int64_t>(data, i);
    case DataType::kBool: return load<uint8_t>(data, i) != 0;
    default: return 0;
  }
}
uint64_t load_unsigned(DataType type, const void* data, size_t i) {
  switch (type) {
    case DataType::kUInt8: return load<uint8_t>(data, i);
    case DataType::kUInt16: return load<uint16_t>(data, i);
    case DataType::kUInt32: return load<uint32_t>(data, i);
    case DataType::kUInt64: return load<uint64_t>(data, i);
    default: return 0;
  }
}

void store_double(DataType type, void* dst, size_t i, double v) {
  switch (type) {
    case DataType::kFloat32: store(dst, i, static_cast<float>(v)); break;
    case DataType::kFloat64: store(dst, i, v); break;
    // Narrow formats round once, from fp32. Rounding fp64 -> fp32 -> narrow can differ from a
    // direct fp64 -> narrow rounding only for fp64 values that are not fp32 values.
    case DataType::kFloat16: store(dst, i, float_to_fp16(static_cast<float>(v))); break;
    case DataType::kBFloat16: store(dst, i, float_to_bf16(static_cast<float>(v))); break;
    case DataType::kFloat8E4M3: store(dst, i, float_to_fp8e4m3(static_cast<float>(v))); break;
    case DataType::kFloat8E5M2: store(dst, i, float_to_fp8e5m2(static_cast<float>(v))); break;
    case DataType::kInt8: store(dst, i, saturate_float<int8_t>(v)); break;
    case DataType::kUInt8: store(dst, i, saturate_float<uint8_t>(v)); break;
    case DataType::kInt16: store(dst, i, saturate_float<int16_t>(v)); break;
    case DataType::kUInt16: store(dst, i, saturate_float<uint16_t>(v)); break;
    case DataType::kInt32: store(dst, i, saturate_float<int32_t>(v)); break;
    case DataType::kUInt32: store(dst, i, saturate_float<uint32_t>(v)); break;
    case DataType::kInt64: store(dst, i, saturate_float<int64_t>(v)); break;
    case DataType::kUInt64: store(dst, i, saturate_float<uint64_t>(v)); break;
    case DataType::kBool: store<uint8_t>(dst, i, v != 0.0 || std::isnan(v)); break;
  }
}

template <typename Wide>
void store_integer(DataType type, void* dst, size_t i, Wide v) {
  constexpr bool kSigned = std::is_signed_v<Wide>;
  auto sat = [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kSigned) return saturate_int<T>(v);
    else return saturate_uint<T>(v);
  };
  switch (type) {
    case DataType::kInt8: store(dst, i, sat(int8_t{})); break;
    case DataType::kUInt8: store(dst, i, sat(uint8_t{})); break;
    case DataType::kInt16: store(dst, i, sat(int16_t{})); break;
    case DataType::kUInt16: store(dst, i, sat(uint16_t{})); break;
    case DataType::kInt32: store(dst, i, sat(int32_t{})); break;
    case DataType::kUInt32: store(dst, i, sat(uint32_t{})); break;
    case DataType::kInt64: store(dst, i, sat(int64_t{})); break;
    case DataType::kUInt64: store(dst, i, sat(uint64_t{})); break;
    case DataType::kBool: store<uint8_t>(dst, i, v != 0); break;
    default: store_double(type, dst, i, static_cast<double>(v)); break;
  }
}

}  // namespace

double load_as_double(DataType type, const void* data, size_t i) {
  switch (type) {
    case DataType::kFloat32: return load<float>(data, i);
    case DataType::kFloat64: return load<double>(data, i);
    case DataType::kFloat16: return fp16_to_float(load<uint16_t>(data, i));
    case DataType::kBFloat16: return bf16_to_float(load<uint16_t>(data, i));
    case DataType::kFloat8E4M3: return fp8e4m3_to_float(load<uint8_t>(data, i));
    case DataType::kFloat8E5M2: return fp8e5m2_to_float(load<uint8_t>(data, i));
    case DataType::kInt8: return load<int8_t>(data, i);
    case DataType::kUInt8: return load<uint8_t>(data, i);
    case DataType::kInt16: return load<int16_t>(data, i);
    case DataType::kUInt16: return load<uint16_t>(data, i);
    case DataType::kInt32: return load<int32_t>(data, i);
    case DataType::kUInt32: return load<uint32_t>(data, i);
    case DataType::kInt64: return static_cast<double>(load<int64_t>(data, i));
    case DataType::kUInt64: return static_cast<double>(load<uint64_t>(data, i));
    case DataType::kBool: return load<uint8_t>(data, i) != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

void convert_elements(DataType src_type, const void* src, DataType dst_type, void* dst, size_t count) {
  if (src_type == dst_type) {
    std::memmove(dst, src, count * data_type_size(src_type));
    return;
  }
  const bool src_integral = is_integer(src_type) || src_type == DataType::kBool;
  for (size_t i = 0; i < count; ++i) {
    if (src_integral && is_unsigned_integer(src_type)) {
      store_integer(dst_type, dst, i, load_unsigned(src_type, src, i));
    } else if (src_integral) {
      store_integer(dst_type, dst, i, load_signed(src_type, src, i));
    } else {
      store_double(dst_type, dst, i, load_as_double(src_type, src, i));
    }
  }
}

}  // namespace tensoracle
