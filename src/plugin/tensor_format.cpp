#include <algorithm>
#include <cctype>
#include <string>

#include "core/errors.h"
#include "tensoracle/plugin.h"

namespace tensoracle {

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
  for (TensorFormat format : {TensorFormat::kLinear, TensorFormat::kHwc, TensorFormat::kHwc8}) {
    if (upper == tensor_format_name(format)) return format;
  }
  return invalid_argument("unknown tensor format '{}': expected LINEAR, HWC or HWC8", name);
}

std::string type_format_name(const TypeFormat& type_format) {
  return std::string(data_type_name(type_format.type)) + "/" + std::string(tensor_format_name(type_format.format));
}

}  // namespace tensoracle
