// The converter table (op_table.h).
#include "frontends/onnx/op_table.h"

#include "tensoracle/float_formats.h"
#include "tensoracle/onnx.h"

#include <algorithm>
#include <map>

namespace tensoracle::onnx_import {
namespace {

const std::map<std::string, ConvertFn>& table() {
  static const std::map<std::string, ConvertFn> converters = [] {
    std::map<std::string, ConvertFn> out;
    for (const auto* family : {&pointwise_converters(), &composite_converters(), &nn_converters(), &einsum_converters(), &transformer_converters(),
                               &image_converters(),
                               &shape_converters(), &layout_converters(), &generate_converters(),
                               &quantize_converters()})
      for (const OpConverter& c : *family) out.emplace(c.op_type, c.convert);
    return out;
  }();
  return converters;
}

}  // namespace

ConvertFn find_converter(const std::string& op_type) {
  const auto it = table().find(op_type);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : table()) out.push_back(name);
  return out;
}

Tensor copy_of(Network& net, Tensor t, const std::string& name) {
  // A reshape whose every dim copies the input's (0) is the identity.
  const size_t rank = net.tensor(t).desc.shape.rank();
  return net.reshape(t, ReshapeAttributes().set_shape(std::vector<int64_t>(rank, 0)).set_name(name));
}

Result<int64_t> normalize_axis(NodeContext& ctx, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) return ctx.invalid("{} {} is outside [{}, {})", what, axis, -rank, rank);
  return axis < 0 ? axis + rank : axis;
}

Result<Tensor> reshape_moving(NodeContext& ctx, Tensor x, std::vector<int64_t> out, const std::vector<int64_t>& from,
                              const std::string& name) {
  int inferred = 0;
  for (size_t j = 0; j < out.size(); ++j) {
    if (out[j] >= 0) continue;
    if (from[j] == static_cast<int64_t>(j)) {
      out[j] = 0;
    } else if (++inferred > 1) {
      return ctx.refuse("the output shape has several dynamic dims that move; not supported");
    }
  }
  const Tensor y = ctx.net().reshape(x, ReshapeAttributes().set_shape(out).set_name(name));
  TO_RETURN_IF_ERROR(ctx.network_status());
  return y;
}

std::shared_ptr<const ConstantValue> owned_constant(HostArray array) {
  auto owner = std::make_shared<HostArray>(std::move(array));
  return std::make_shared<ConstantValue>(ConstantValue{owner->view(), owner});
}

Result<Tensor> int64_constant(NodeContext& ctx, const std::vector<int64_t>& values, const std::string& name) {
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(DataType::kInt64, Dims{static_cast<int64_t>(values.size())}));
  std::copy(values.begin(), values.end(), array.data_as<int64_t>());
  return ctx.net().add_constant(std::move(array), name);
}

Result<Tensor> float_scalar(NodeContext& ctx, DataType dtype, double value, const std::string& name) {
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(dtype, Dims{}));
  const float f = static_cast<float>(value);
  switch (dtype) {
    case DataType::kFloat32: *array.data_as<float>() = f; break;
    case DataType::kFloat64: *array.data_as<double>() = value; break;
    case DataType::kFloat16: *array.data_as<uint16_t>() = float_to_fp16(f); break;
    case DataType::kBFloat16: *array.data_as<uint16_t>() = float_to_bf16(f); break;
    default: return ctx.refuse("a constant of {} operands is not supported", data_type_name(dtype));
  }
  return ctx.net().add_constant(std::move(array), name);
}

}  // namespace tensoracle::onnx_import

namespace tensoracle {

std::vector<std::string> onnx_supported_ops() { return onnx_import::supported_op_types(); }

}  // namespace tensoracle
