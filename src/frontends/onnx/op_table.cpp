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
                               &shape_converters(), &layout_converters(), &gather_converters(), &generate_converters(),
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
  // The inferred dim is the input dim it moved from, which a later Shape of y reads.
  for (size_t j = 0; j < out.size(); ++j)
    if (out[j] == -1 && from[j] >= 0) ctx.symbols().set(y, j, ctx.symbols().dim(ctx.net(), x, static_cast<size_t>(from[j])));
  return y;
}

namespace {

// ONNX's rule for a start or end index into a dim of size `dim`: negative counts from the end,
// then clamped to [0, dim] for a positive step and to [0, dim-1] (start) or [-1, dim-1] (end) for
// a negative one.
int64_t clamp_index(int64_t index, int64_t dim, bool positive_step, bool is_end) {
  if (index < 0) index += dim;
  const int64_t low = positive_step ? 0 : (is_end ? -1 : 0);
  const int64_t high = positive_step ? dim : dim - 1;
  return std::max(low, std::min(index, high));
}

}  // namespace

SliceRange slice_range(int64_t start, int64_t end, int64_t step, int64_t dim) {
  const bool positive = step > 0;
  start = clamp_index(start, dim, positive, false);
  end = clamp_index(end, dim, positive, true);
  // The number of indices start, start+step, ... strictly before end (integer ceiling).
  int64_t size = 0;
  if (positive && end > start) size = (end - start + step - 1) / step;
  if (!positive && start > end) size = (start - end + (-step) - 1) / (-step);
  return SliceRange{size > 0 ? start : 0, size};
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
