// Values made at import time from constants: Size, ConstantOfShape, Range. Their inputs must be
// known when the model is imported (initializers, Constant nodes, folded shape computations).
#include <cmath>
#include <cstring>

#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// The largest tensor these ops make: far above an attention mask of a long sequence, far below
// what a hostile model could ask for.
constexpr int64_t kMaxGeneratedBytes = int64_t{1} << 30;

Result<HostArray> generated_array(NodeContext& ctx, DataType dtype, const Dims& shape) {
  TO_ASSIGN_OR_RETURN_CONTEXT(const int64_t bytes, shape.byte_size(dtype), ctx.where());
  if (bytes > kMaxGeneratedBytes)
    return ctx.refuse("the output {} of {} would hold {} bytes, over the {} this importer makes", shape.to_string(),
                      data_type_name(dtype), bytes, kMaxGeneratedBytes);
  return HostArray::zeros(dtype, shape);
}

Status convert_size(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const Dims shape = ctx.desc(x).shape;
  if (!shape.is_static()) return ctx.refuse("Size of {} (dynamic dims) is not supported", ctx.desc(x).to_string());
  TO_ASSIGN_OR_RETURN(const int64_t count, shape.element_count());
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(DataType::kInt64, Dims{}));
  *array.data_as<int64_t>() = count;
  return ctx.set_constant_output(0, owned_constant(std::move(array)));
}

Status convert_constant_of_shape(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, ctx.int_list_input(0));
  if (dims.size() > Dims::kMaxRank) return ctx.invalid("the shape has {} dims, over {}", dims.size(), Dims::kMaxRank);
  for (int64_t d : dims)
    if (d < 0) return ctx.invalid("the shape [{}] has a negative dim", fmt::join(dims, ","));
  // The fill value: a one-element tensor attribute, float 0 by default.
  ConstantValue fill;
  const float zero = 0.0f;
  fill.view = ArrayView{DataType::kFloat32, Dims{1}, &zero};
  TO_ASSIGN_OR_RETURN(const onnx::AttributeProto* value, ctx.attribute_tensor("value"));
  if (value != nullptr) {
    TO_ASSIGN_OR_RETURN(fill, constant_from_tensor(value->t(), ctx.model(), ctx.external(), ctx.where() + ": attribute 'value'"));
    if (fill.view.element_count() != 1)
      return ctx.invalid("attribute 'value' has {} elements, expected 1", fill.view.element_count());
  }
  TO_ASSIGN_OR_RETURN(HostArray array, generated_array(ctx, fill.view.dtype, Dims(dims)));
  const size_t size = data_type_size(fill.view.dtype);
  auto* out = static_cast<uint8_t*>(array.data());
  for (int64_t i = 0; i < array.element_count(); ++i) std::memcpy(out + static_cast<size_t>(i) * size, fill.view.data, size);
  return ctx.set_constant_output(0, owned_constant(std::move(array)));
}

template <typename T>
void fill_range(HostArray& array, double start, double delta) {
  T* out = array.data_as<T>();
  for (int64_t i = 0; i < array.element_count(); ++i) out[i] = static_cast<T>(start + static_cast<double>(i) * delta);
}

Status convert_range(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const ConstantValue* start_value, ctx.constant_input(0));
  TO_ASSIGN_OR_RETURN(const double start, ctx.scalar_input(0));
  TO_ASSIGN_OR_RETURN(const double limit, ctx.scalar_input(1));
  TO_ASSIGN_OR_RETURN(const double delta, ctx.scalar_input(2));
  const DataType dtype = start_value->view.dtype;
  if (delta == 0) return ctx.invalid("delta is 0");
  const double steps = std::ceil((limit - start) / delta);
  if (!std::isfinite(steps)) return ctx.invalid("start {}, limit {} and delta {} give no finite count", start, limit, delta);
  const int64_t count = steps > 0 ? static_cast<int64_t>(std::min(steps, 9.0e18)) : 0;
  TO_ASSIGN_OR_RETURN(HostArray array, generated_array(ctx, dtype, Dims{count}));
  switch (dtype) {
    case DataType::kInt64: {
      // Exact integer steps (a double would round above 2^53).
      TO_ASSIGN_OR_RETURN(const std::vector<int64_t> s, ctx.int_list_input(0));
      TO_ASSIGN_OR_RETURN(const std::vector<int64_t> d, ctx.int_list_input(2));
      for (int64_t i = 0; i < count; ++i) {
        const std::optional<int64_t> step = checked_mul(i, d[0]);
        const std::optional<int64_t> value = step ? checked_add(s[0], *step) : std::nullopt;
        if (!value) return ctx.invalid("element {} of the range overflows int64", i);
        array.data_as<int64_t>()[i] = *value;
      }
      break;
    }
    case DataType::kInt32: fill_range<int32_t>(array, start, delta); break;
    case DataType::kInt16: fill_range<int16_t>(array, start, delta); break;
    case DataType::kFloat32: fill_range<float>(array, start, delta); break;
    case DataType::kFloat64: fill_range<double>(array, start, delta); break;
    default: return ctx.refuse("a range of {} is not supported (int16/32/64, float, double are)", data_type_name(dtype));
  }
  return ctx.set_constant_output(0, owned_constant(std::move(array)));
}

}  // namespace

const std::vector<OpConverter>& generate_converters() {
  static const std::vector<OpConverter> converters = {
      {"Size", &convert_size},
      {"ConstantOfShape", &convert_constant_of_shape},
      {"Range", &convert_range},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
