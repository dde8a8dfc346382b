// TensorProto -> ConstantValue (onnx_tensor.h).
#include "frontends/onnx/onnx_tensor.h"

#include <cstring>

#include "core/errors.h"
#include "frontends/onnx/external_data.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::onnx_import {
namespace {

using TP = onnx::TensorProto;

// Copies a repeated field into an owned array of `dtype`, converting each element with `convert`.
template <typename Field, typename Convert>
Result<ConstantValue> owned_from_field(const Field& field, DataType dtype, const Dims& shape, Convert convert) {
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(dtype, shape));
  auto* out = static_cast<uint8_t*>(array.data());
  const size_t size = data_type_size(dtype);
  for (int i = 0; i < field.size(); ++i) convert(field.Get(i), out + static_cast<size_t>(i) * size);
  auto owner = std::make_shared<HostArray>(std::move(array));
  const ArrayView view = owner->view();
  return ConstantValue{view, owner};
}

template <typename T>
auto store_as() {
  return [](auto v, uint8_t* out) {
    const T value = static_cast<T>(v);
    std::memcpy(out, &value, sizeof(T));
  };
}

}  // namespace

std::optional<DataType> data_type_of_onnx(int32_t onnx_type) {
  switch (onnx_type) {
    case TP::FLOAT: return DataType::kFloat32;
    case TP::UINT8: return DataType::kUInt8;
    case TP::INT8: return DataType::kInt8;
    case TP::UINT16: return DataType::kUInt16;
    case TP::INT16: return DataType::kInt16;
    case TP::INT32: return DataType::kInt32;
    case TP::INT64: return DataType::kInt64;
    case TP::BOOL: return DataType::kBool;
    case TP::FLOAT16: return DataType::kFloat16;
    case TP::DOUBLE: return DataType::kFloat64;
    case TP::UINT32: return DataType::kUInt32;
    case TP::UINT64: return DataType::kUInt64;
    case TP::BFLOAT16: return DataType::kBFloat16;
    case TP::FLOAT8E4M3FN: return DataType::kFloat8E4M3;
    case TP::FLOAT8E5M2: return DataType::kFloat8E5M2;
    default: return std::nullopt;
  }
}

std::string onnx_type_name(int32_t onnx_type) {
  if (TP::DataType_IsValid(onnx_type)) return TP::DataType_Name(static_cast<TP::DataType>(onnx_type));
  return fmt::format("code {}", onnx_type);
}

Result<ConstantValue> constant_from_tensor(const onnx::TensorProto& tensor, const std::shared_ptr<const void>& model,
                                           ExternalDataFiles& external, const std::string& what) {
  if (tensor.data_location() != TP::DEFAULT && tensor.data_location() != TP::EXTERNAL)
    return unsupported("{}: data_location {} is not supported", what, static_cast<int>(tensor.data_location()));
  if (tensor.data_location() != TP::EXTERNAL && tensor.external_data_size() > 0)
    return invalid_argument("{}: it has external_data entries but its data_location is not EXTERNAL", what);
  if (tensor.has_segment()) return unsupported("{}: segmented tensors are not supported", what);
  const std::optional<DataType> dtype = data_type_of_onnx(tensor.data_type());
  if (!dtype) return unsupported("{}: data type {} is not supported", what, onnx_type_name(tensor.data_type()));
  if (static_cast<size_t>(tensor.dims_size()) > Dims::kMaxRank)
    return invalid_argument("{}: rank {} exceeds the maximum {}", what, tensor.dims_size(), Dims::kMaxRank);
  std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0) return invalid_argument("{}: dim {} is {}; tensor dims must be non-negative", what, i, dims[i]);
  const Dims shape(dims);
  TO_ASSIGN_OR_RETURN_CONTEXT(const int64_t bytes, shape.byte_size(*dtype), fmt::format("{}: dims {}", what, shape.to_string()));
  const int64_t count = bytes / static_cast<int64_t>(data_type_size(*dtype));

  if (tensor.data_location() == TP::EXTERNAL) return external.read(tensor, *dtype, shape, bytes, what);
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    if (static_cast<int64_t>(raw.size()) != bytes)
      return invalid_argument("{}: raw_data holds {} bytes, {} of {} need {}", what, raw.size(), shape.to_string(),
                              data_type_name(*dtype), bytes);
    return ConstantValue{ArrayView{*dtype, shape, raw.data()}, model};
  }
  // The typed field that holds this type's values (onnx-ml.proto documents which).
  const auto check_count = [&](int size, const char* field) -> Status {
    if (size != count)
      return invalid_argument("{}: {} holds {} values, dims {} need {}", what, field, size, shape.to_string(), count);
    return Status::ok();
  };
  switch (tensor.data_type()) {
    case TP::FLOAT:
      TO_RETURN_IF_ERROR(check_count(tensor.float_data_size(), "float_data"));
      return owned_from_field(tensor.float_data(), *dtype, shape, store_as<float>());
    case TP::DOUBLE:
      TO_RETURN_IF_ERROR(check_count(tensor.double_data_size(), "double_data"));
      return owned_from_field(tensor.double_data(), *dtype, shape, store_as<double>());
    case TP::INT64:
      TO_RETURN_IF_ERROR(check_count(tensor.int64_data_size(), "int64_data"));
      return owned_from_field(tensor.int64_data(), *dtype, shape, store_as<int64_t>());
    case TP::UINT32:
    case TP::UINT64:
      TO_RETURN_IF_ERROR(check_count(tensor.uint64_data_size(), "uint64_data"));
      if (*dtype == DataType::kUInt32) return owned_from_field(tensor.uint64_data(), *dtype, shape, store_as<uint32_t>());
      return owned_from_field(tensor.uint64_data(), *dtype, shape, store_as<uint64_t>());
    default:
      break;
  }
  // Everything else is stored in int32_data: integers by value, 16- and 8-bit floats by their bits.
  TO_RETURN_IF_ERROR(check_count(tensor.int32_data_size(), "int32_data"));
  switch (*dtype) {
    case DataType::kInt32: return owned_from_field(tensor.int32_data(), *dtype, shape, store_as<int32_t>());
    case DataType::kInt16: return owned_from_field(tensor.int32_data(), *dtype, shape, store_as<int16_t>());
    case DataType::kInt8: return owned_from_field(tensor.int32_data(), *dtype, shape, store_as<int8_t>());
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kUInt16: return owned_from_field(tensor.int32_data(), *dtype, shape, store_as<uint16_t>());
    case DataType::kBool:
      return owned_from_field(tensor.int32_data(), *dtype, shape, [](int32_t v, uint8_t* out) { *out = v != 0 ? 1 : 0; });
    default: return owned_from_field(tensor.int32_data(), *dtype, shape, store_as<uint8_t>());
  }
}

Result<std::vector<int64_t>> int_values(const ConstantValue& value, const std::string& what) {
  const int64_t count = value.view.element_count();
  std::vector<int64_t> out(static_cast<size_t>(count));
  if (value.view.dtype == DataType::kInt64) {
    if (count > 0) std::memcpy(out.data(), value.view.data, static_cast<size_t>(count) * sizeof(int64_t));
  } else if (value.view.dtype == DataType::kInt32) {
    for (int64_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, static_cast<const uint8_t*>(value.view.data) + i * 4, 4);
      out[static_cast<size_t>(i)] = v;
    }
  } else {
    return invalid_argument("{}: expected int32 or int64 values, got {}", what, data_type_name(value.view.dtype));
  }
  return out;
}

Result<double> scalar_value(const ConstantValue& value, const std::string& what) {
  if (value.view.element_count() != 1)
    return invalid_argument("{}: expected one value, got shape {}", what, value.view.shape.to_string());
  const auto* p = static_cast<const uint8_t*>(value.view.data);
  switch (value.view.dtype) {
    case DataType::kFloat32: { float v; std::memcpy(&v, p, 4); return static_cast<double>(v); }
    case DataType::kFloat64: { double v; std::memcpy(&v, p, 8); return v; }
    case DataType::kFloat16: { uint16_t v; std::memcpy(&v, p, 2); return static_cast<double>(fp16_to_float(v)); }
    case DataType::kBFloat16: { uint16_t v; std::memcpy(&v, p, 2); return static_cast<double>(bf16_to_float(v)); }
    case DataType::kInt32:
    case DataType::kInt64: {
      TO_ASSIGN_OR_RETURN(const std::vector<int64_t> v, int_values(value, what));
      return static_cast<double>(v[0]);
    }
    case DataType::kInt8: return static_cast<double>(static_cast<int8_t>(*p));
    case DataType::kUInt8: return static_cast<double>(*p);
    default: return unsupported("{}: a {} scalar is not supported here", what, data_type_name(value.view.dtype));
  }
}

}  // namespace tensoracle::onnx_import
