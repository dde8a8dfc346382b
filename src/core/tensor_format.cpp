// The memory-format vocabulary (tensor_format.h).
#include "tensoracle/tensor_format.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "core/errors.h"

namespace tensoracle {

namespace {

bool is_sixteen_bit_float(DataType type) { return type == DataType::kFloat16 || type == DataType::kBFloat16; }

int64_t padded_channels(int64_t channels) { return (channels + 7) / 8 * 8; }

}  // namespace

std::string_view tensor_format_name(TensorFormat format) {
  switch (format) {
    case TensorFormat::kLinear: return "LINEAR";
    case TensorFormat::kHwc: return "HWC";
    case TensorFormat::kHwc8: return "HWC8";
  }
  return "?";
}

Result<TensorFormat> parse_tensor_format(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (TensorFormat format : kAllTensorFormats) {
    if (upper == tensor_format_name(format)) return format;
  }
  return invalid_argument("unknown tensor format '{}': expected LINEAR, HWC or HWC8", name);
}

std::string type_format_name(const TypeFormat& type_format) {
  return std::string(data_type_name(type_format.type)) + "/" + std::string(tensor_format_name(type_format.format));
}

Result<TypeFormat> parse_type_format(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos)
    return invalid_argument("'{}' is not a type/format pair such as fp16/HWC8", text);
  auto type = parse_data_type(text.substr(0, slash));
  if (!type.is_ok()) return invalid_argument("'{}': {}", text, type.status().message());
  TO_ASSIGN_OR_RETURN(const TensorFormat format, parse_tensor_format(text.substr(slash + 1)));
  return TypeFormat{*type, format};
}

Status check_format_applies(const TypeFormat& type_format, const Dims& shape) {
  if (type_format.format == TensorFormat::kLinear) return Status::ok();
  if (shape.rank() != 4)
    return invalid_argument("{} needs a rank-4 [N, C, H, W] tensor, not shape {}", type_format_name(type_format),
                            shape.to_string());
  if (type_format.format == TensorFormat::kHwc8 && !is_sixteen_bit_float(type_format.type))
    return invalid_argument("format HWC8 needs fp16 or bf16, not {}", data_type_name(type_format.type));
  return Status::ok();
}

Result<std::vector<int64_t>> format_strides(TensorFormat format, const Dims& shape) {
  const size_t rank = shape.rank();
  std::vector<int64_t> strides(rank, 1);
  if (format == TensorFormat::kLinear) {
    for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    return strides;
  }
  if (rank != 4)
    return invalid_argument("format {} needs a rank-4 shape, not {}", tensor_format_name(format), shape.to_string());
  const int64_t c = format == TensorFormat::kHwc8 ? padded_channels(shape[1]) : shape[1];
  strides[1] = 1;
  strides[3] = c;
  strides[2] = c * shape[3];
  strides[0] = c * shape[3] * shape[2];
  return strides;
}

Result<int64_t> format_storage_elements(TensorFormat format, const Dims& shape) {
  TO_ASSIGN_OR_RETURN(const int64_t count, shape.element_count());
  if (format != TensorFormat::kHwc8) return count;
  if (shape.rank() != 4)
    return invalid_argument("format HWC8 needs a rank-4 shape, not {}", shape.to_string());
  if (shape[1] == 0) return int64_t{0};
  return count / shape[1] * padded_channels(shape[1]);
}

}  // namespace tensoracle
