#include <algorithm>
#include <cctype>
#include <string>

#include "core/errors.h"
#include "tensoracle/types.h"

namespace tensoracle {
namespace {

struct DataTypeInfo {
  DataType type;
  std::string_view name;
  size_t size;
  bool floating;
  bool integer;
  bool is_signed;
  std::initializer_list<std::string_view> aliases;
};

// One row per DataType, in enum order.
const DataTypeInfo kInfo[] = {
    {DataType::kFloat32, "fp32", 4, true, false, true, {"float32", "float", "f32"}},
    {DataType::kFloat16, "fp16", 2, true, false, true, {"float16", "half", "f16"}},
    {DataType::kBFloat16, "bf16", 2, true, false, true, {"bfloat16"}},
    {DataType::kFloat8E4M3, "fp8e4m3", 1, true, false, true, {"float8_e4m3fn", "e4m3", "fp8"}},
    {DataType::kFloat8E5M2, "fp8e5m2", 1, true, false, true, {"float8_e5m2", "e5m2"}},
    {DataType::kFloat64, "fp64", 8, true, false, true, {"float64", "double", "f64"}},
    {DataType::kInt8, "int8", 1, false, true, true, {"i8"}},
    {DataType::kUInt8, "uint8", 1, false, true, false, {"u8"}},
    {DataType::kInt16, "int16", 2, false, true, true, {"i16"}},
    {DataType::kUInt16, "uint16", 2, false, true, false, {"u16"}},
    {DataType::kInt32, "int32", 4, false, true, true, {"i32"}},
    {DataType::kUInt32, "uint32", 4, false, true, false, {"u32"}},
    {DataType::kInt64, "int64", 8, false, true, true, {"i64"}},
    {DataType::kUInt64, "uint64", 8, false, true, false, {"u64"}},
    {DataType::kBool, "bool", 1, false, false, false, {"boolean"}},
};

const DataTypeInfo& info(DataType type) { return kInfo[static_cast<size_t>(type)]; }

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const std::vector<DataType>& all_data_types() {
  static const std::vector<DataType> types = [] {
    std::vector<DataType> out;
    for (const auto& row : kInfo) out.push_back(row.type);
    return out;
  }();
  return types;
}

size_t data_type_size(DataType type) { return info(type).size; }
std::string_view data_type_name(DataType type) { return info(type).name; }
bool is_floating_point(DataType type) { return info(type).floating; }
bool is_integer(DataType type) { return info(type).integer; }
bool is_signed(DataType type) { return info(type).is_signed; }

Result<DataType> parse_data_type(std::string_view name) {
  const std::string wanted = lower(name);
  std::string accepted;
  for (const auto& row : kInfo) {
    if (wanted == row.name) return row.type;
    for (std::string_view alias : row.aliases)
      if (wanted == alias) return row.type;
    accepted += accepted.empty() ? "" : ", ";
    accepted += row.name;
  }
  return invalid_argument("unknown data type '{}' (accepted: {})", name, accepted);
}

}  // namespace tensoracle
