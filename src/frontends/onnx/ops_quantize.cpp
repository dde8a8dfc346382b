// QuantizeLinear and DequantizeLinear onto the quantize and dequantize layers: int8 and fp8 e4m3fn,
// a per-tensor scale (a scalar or [1]) or a per-axis one ([C] along `axis`). The layers have no
// zero point, so a zero point must be a constant of zeros (its type still names the quantized
// type); uint8 (ONNX's default without a zero point), blocked scales and saturate 0 are refused.
#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// The quantized type given by the zero point's type (input 2), else by output_dtype, else uint8
// (ONNX's default, not supported); checks the zero point is all zeros.
Result<DataType> quantized_type(NodeContext& ctx, int64_t output_dtype) {
  std::optional<DataType> type;
  if (ctx.has_input(2)) {
    TO_ASSIGN_OR_RETURN(const ConstantValue* zero, ctx.constant_input(2));
    type = zero->view.dtype;
    const auto* bytes = static_cast<const uint8_t*>(zero->view.data);
    const int64_t count = zero->view.byte_size();
    for (int64_t i = 0; i < count; ++i)
      if (bytes[i] != 0) return ctx.refuse("a non-zero zero point is not supported (the Q/DQ layers are symmetric)");
  } else if (output_dtype != 0) {
    type = data_type_of_onnx(static_cast<int32_t>(output_dtype));
    if (!type) return ctx.refuse("output_dtype {} is not supported", onnx_type_name(static_cast<int32_t>(output_dtype)));
  } else {
    return ctx.refuse("without a zero point the quantized type is uint8, which is not supported (int8 and "
                      "float8e4m3fn are)");
  }
  if (*type != DataType::kInt8 && *type != DataType::kFloat8E4M3)
    return ctx.refuse("quantized type {} is not supported (int8 and float8e4m3fn are)", data_type_name(*type));
  return *type;
}

// The attributes both ops share: block_size 0 only; axis as given.
Result<int64_t> quantize_axis(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t block_size, ctx.attribute_int("block_size", 0));
  if (block_size != 0) return ctx.refuse("block_size {} (blocked quantization) is not supported", block_size);
  return ctx.attribute_int("axis", 1);
}

Status convert_quantize(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, quantize_axis(ctx));
  TO_ASSIGN_OR_RETURN(const int64_t saturate, ctx.attribute_int("saturate", 1));
  TO_ASSIGN_OR_RETURN(const int64_t output_dtype, ctx.attribute_int("output_dtype", 0));
  TO_ASSIGN_OR_RETURN(const int64_t precision, ctx.attribute_int("precision", 0));
  if (precision != 0) return ctx.refuse("attribute 'precision' {} is not supported", precision);
  TO_ASSIGN_OR_RETURN(const DataType type, quantized_type(ctx, output_dtype));
  if (saturate != 1 && type == DataType::kFloat8E4M3) return ctx.refuse("saturate {} is not supported (only 1)", saturate);
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(Tensor scale, ctx.input(1));
  // The layer takes the scale in the input's type.
  if (ctx.desc(scale).dtype != ctx.desc(x).dtype)
    scale = ctx.net().cast(scale, CastAttributes().set_output_type(ctx.desc(x).dtype).set_name(ctx.layer_name() + "/scale"));
  return ctx.set_output(0, ctx.net().quantize(x, scale, QuantizeAttributes().set_output_type(type).set_axis(axis)
                                                           .set_name(ctx.layer_name())));
}

Status convert_dequantize(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, quantize_axis(ctx));
  TO_ASSIGN_OR_RETURN(const int64_t output_dtype, ctx.attribute_int("output_dtype", 0));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor scale, ctx.input(1));
  const DataType in = ctx.desc(x).dtype;
  if (in != DataType::kInt8 && in != DataType::kFloat8E4M3)
    return ctx.refuse("quantized type {} is not supported (int8 and float8e4m3fn are)", data_type_name(in));
  if (ctx.has_input(2)) {
    TO_ASSIGN_OR_RETURN(const DataType zero_type, quantized_type(ctx, 0));
    if (zero_type != ctx.desc(x).dtype)
      return ctx.invalid("the zero point is {} and the input {}", data_type_name(zero_type), ctx.desc(x).to_string());
  }
  DataType out = ctx.desc(scale).dtype;
  if (output_dtype != 0) {
    const std::optional<DataType> wanted = data_type_of_onnx(static_cast<int32_t>(output_dtype));
    if (!wanted || *wanted != out)
      return ctx.refuse("output_dtype {} other than the scale's type is not supported", onnx_type_name(static_cast<int32_t>(output_dtype)));
  }
  return ctx.set_output(0, ctx.net().dequantize(x, scale, DequantizeAttributes().set_output_type(out).set_axis(axis)
                                                             .set_name(ctx.layer_name())));
}

}  // namespace

const std::vector<OpConverter>& quantize_converters() {
  static const std::vector<OpConverter> converters = {
      {"QuantizeLinear", &convert_quantize},
      {"DequantizeLinear", &convert_dequantize},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
