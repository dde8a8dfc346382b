// ONNX tensors (TensorProto) as arrays: the element type mapping and the checked conversion of an
// initializer or a Constant node's value.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnx-ml.pb.h"
#include "tensoracle/array.h"
#include "tensoracle/status.h"

namespace tensoracle::onnx_import {

// An array known at import time and what keeps its bytes alive (the model, or an owned copy).
struct ConstantValue {
  ArrayView view;
  std::shared_ptr<const void> owner;
};

// The DataType of an ONNX TensorProto.DataType code; nullopt for the ones tensoracle has no type
// for (strings, complex, the FNUZ fp8 variants, 4-bit types, ...).
std::optional<DataType> data_type_of_onnx(int32_t onnx_type);
// "FLOAT", "INT64", ... or "code N" for a code the schema does not name.
std::string onnx_type_name(int32_t onnx_type);

class ExternalDataFiles;  // external_data.h

// The array of `tensor`: raw_data is borrowed (kept alive by `model`), typed fields are converted,
// external data is read through `external` (a view into the mapped file). Checks the type, dims
// (non-negative, rank at most Dims::kMaxRank, no overflow) and that the data size matches the
// dims; errors name `what` (e.g. "initializer 'conv.weight'").
Result<ConstantValue> constant_from_tensor(const onnx::TensorProto& tensor, const std::shared_ptr<const void>& model,
                                           ExternalDataFiles& external, const std::string& what);

// The values of an integer constant (int32 or int64) as int64; errors name `what`.
Result<std::vector<int64_t>> int_values(const ConstantValue& value, const std::string& what);
// The value of a one-element numeric constant as double.
Result<double> scalar_value(const ConstantValue& value, const std::string& what);

}  // namespace tensoracle::onnx_import
