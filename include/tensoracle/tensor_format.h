// How a tensor's elements are laid out in memory: the one vocabulary of plugins (the formats a
// plugin accepts and writes, plugin.h), engine I/O tables (IoTensor::format, engine_file.h) and
// the backends (the cuda backend's channels-last layout is TensorFormat::kHwc,
// backends/cuda/device_tensor.h).
//
//   TensorFormat f = *parse_tensor_format("hwc8");               // TensorFormat::kHwc8
//   tensor_format_name(f);                                        // "HWC8"
//   type_format_name({DataType::kFloat16, f});                    // "fp16/HWC8"
//   *format_strides(TensorFormat::kHwc8, Dims{1, 12, 4, 4});     // {256, 1, 64, 16}
//   *format_storage_elements(TensorFormat::kHwc8, {1, 12, 4, 4});  // 256: C padded to 16
//
// A tensor keeps its logical dims ([N, C, H, W] for images) in every format; the format says
// where element (n, c, h, w) lives. HWC and HWC8 apply to rank-4 tensors only. HWC8 pads C to a
// multiple of 8 with zeros, so its storage can be larger than the element count; the padding is
// written as zeros by whoever converts into HWC8 and ignored by whoever reads from it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle {

enum class TensorFormat : uint8_t {
  kLinear,  // row-major in the order of the dimensions (NCHW for images)
  kHwc,     // channels last (NHWC)
  kHwc8,    // channels last with C padded to a multiple of 8; 16-bit floating types only
};

inline constexpr TensorFormat kAllTensorFormats[] = {TensorFormat::kLinear, TensorFormat::kHwc, TensorFormat::kHwc8};

// "LINEAR", "HWC", "HWC8": the names plugin declarations, engine files and inspect use.
std::string_view tensor_format_name(TensorFormat format);
// Parses a format name case-insensitively; the error lists the accepted names.
Result<TensorFormat> parse_tensor_format(std::string_view name);

// One element type in one layout.
struct TypeFormat {
  DataType type = DataType::kFloat32;
  TensorFormat format = TensorFormat::kLinear;

  friend bool operator==(const TypeFormat& a, const TypeFormat& b) {
    return a.type == b.type && a.format == b.format;
  }
  friend bool operator!=(const TypeFormat& a, const TypeFormat& b) { return !(a == b); }
};

// "fp16/HWC8".
std::string type_format_name(const TypeFormat& type_format);
// Parses "fp16/HWC8" (the format part case-insensitively); the error shows the expected form.
Result<TypeFormat> parse_type_format(std::string_view text);

// Whether a tensor of `type` and `shape` can be stored in `format`: always for LINEAR; HWC needs
// rank 4; HWC8 needs rank 4 and fp16 or bf16. The error says which condition fails.
Status check_format_applies(const TypeFormat& type_format, const Dims& shape);

// Element strides of each logical dim of `shape` stored in `format`; an error for HWC/HWC8 of a
// rank other than 4.
Result<std::vector<int64_t>> format_strides(TensorFormat format, const Dims& shape);
// How many elements the storage of `shape` in `format` holds: the element count, or for HWC8 the
// count with C rounded up to a multiple of 8.
Result<int64_t> format_storage_elements(TensorFormat format, const Dims& shape);

}  // namespace tensoracle
