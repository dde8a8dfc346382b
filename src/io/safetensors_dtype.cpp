// The safetensors format's dtype names.
#include <array>
#include <utility>

#include "core/errors.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

constexpr std::array<std::pair<DataType, std::string_view>, 15> kNames{{
    {DataType::kBool, "BOOL"},
    {DataType::kUInt8, "U8"},
    {DataType::kInt8, "I8"},
    {DataType::kFloat8E5M2, "F8_E5M2"},
    {DataType::kFloat8E4M3, "F8_E4M3"},
    {DataType::kInt16, "I16"},
    {DataType::kUInt16, "U16"},
    {DataType::kFloat16, "F16"},
    {DataType::kBFloat16, "BF16"},
    {DataType::kInt32, "I32"},
    {DataType::kUInt32, "U32"},
    {DataType::kFloat32, "F32"},
    {DataType::kFloat64, "F64"},
    {DataType::kInt64, "I64"},
    {DataType::kUInt64, "U64"},
}};

}  // namespace

Result<DataType> safetensors_dtype_from_name(std::string_view name) {
  for (const auto& [type, type_name] : kNames)
    if (type_name == name) return type;
  return unsupported(
      "unknown safetensors dtype '{}' (supported: BOOL U8 I8 F8_E5M2 F8_E4M3 I16 U16 F16 BF16 I32 U32 F32 "
      "F64 I64 U64)",
      name);
}

std::string_view safetensors_dtype_name(DataType type) {
  for (const auto& [known, type_name] : kNames)
    if (known == type) return type_name;
  return "?";
}

}  // namespace tensoracle
