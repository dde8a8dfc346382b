#include "backends/cuda/cudnn/qconv_plan.h"

#include <fmt/format.h>

#include "backends/cuda/kernels/quantize_args.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

bool is_one_value(const TensorDesc& scale) {
  const Dims& s = scale.shape;
  return s.rank() == 0 || (s.rank() == 1 && s[0] == 1);
}

int64_t round_up(int64_t v, int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

}  // namespace

std::string QuantizedConvPlan::to_string() const {
  return fmt::format("{} conv {} * {} -> {} ({} accumulator, channels padded to {} -> {}), {}{}",
                     data_type_name(quantized), problem.x_shape.to_string(), problem.w_shape.to_string(),
                     problem.y_shape.to_string(), data_type_name(accumulator), packed.c, packed.k,
                     w_per_channel ? "per-channel weight scales" : "per-tensor scales",
                     requantize ? fmt::format(", quantized to {}", data_type_name(output_type)) : std::string());
}

Result<QuantizedConvPlan> plan_quantized_conv(const StepInstance& step, int cc) {
  const std::string& layer = step.anchor.node.name;
  if (step.anchor.node.kind != OpKind::kConvolution) return unsupported("layer '{}': not a convolution", layer);
  const std::vector<FusedDequantize>& dequantized = step.quantization.dequantized;
  if (dequantized.size() != 2 || dequantized[0].operand != 0 || dequantized[1].operand != 1)
    return unsupported("layer '{}': Q/DQ fusion needs the input and the weight dequantized in the step (and nothing else)",
                       layer);
  const FusedDequantize& x = dequantized[0];
  const FusedDequantize& w = dequantized[1];
  const DataType qx = x.data->dtype, qw = w.data->dtype;
  if (qx != qw || (qx != DataType::kFloat8E4M3 && qx != DataType::kInt8))
    return unsupported("layer '{}': input and weight quantized as {} and {} (fuses both int8 or both fp8e4m3)", layer,
                       data_type_name(qx), data_type_name(qw));
  QuantizedConvPlan plan;
  plan.quantized = qx;
  const bool fp8 = qx == DataType::kFloat8E4M3;
  plan.accumulator = fp8 ? DataType::kFloat32 : DataType::kInt32;
  plan.channel_multiple = fp8 ? 16 : 4;
  plan.output_type = step.outputs.empty() ? DataType::kFloat32 : step.outputs[0].dtype;
  const bool fp8_anywhere = fp8 || (step.quantization.requantize && plan.output_type == DataType::kFloat8E4M3);
  if (fp8_anywhere && cc < 89)
    return unsupported("layer '{}': fp8 e4m3 needs compute capability 8.9 or newer, this GPU is {}.{}", layer, cc / 10,
                       cc % 10);
  if (!fp8 && cc < 80)
    return unsupported("layer '{}': int8 convolutions through cuDNN's graph are offered on compute capability 8.0+, "
                       "this GPU is {}.{}",
                       layer, cc / 10, cc % 10);

  TO_ASSIGN_OR_RETURN(plan.problem, conv_problem(step));
  TO_ASSIGN_OR_RETURN(plan.epilogue, conv_epilogue(step, plan.problem));
  const ConvProblem& p = plan.problem;
  if (p.spatial_rank != 2)
    return unsupported("layer '{}': a {}-D convolution (the fused form takes 2-D ones, cuDNN's channels-last int8/fp8 "
                       "engines)",
                       layer, p.spatial_rank);
  if (p.output_elements() == 0) return unsupported("layer '{}': an empty output", layer);
  if (!is_one_value(*x.scale))
    return unsupported("layer '{}': the scale {} of dequantize '{}' is per-channel (the input takes one scale)", layer,
                       x.scale->to_string(), x.layer->name);
  if (!is_one_value(*w.scale)) {
    TO_ASSIGN_OR_RETURN(const QuantizeArgs channels, quantize_args_of(*w.layer, *w.data, *w.scale, p.dtype));
    if (channels.channels != p.k || channels.inner != p.c / p.groups * p.kernel[1] * p.kernel[2])
      return unsupported("layer '{}': the per-channel scale {} of dequantize '{}' is not along the weight's output "
                         "channels (axis 0 of {})",
                         layer, w.scale->to_string(), w.layer->name, w.data->to_string());
    plan.w_per_channel = true;
  }
  plan.x_data = x.data_input;
  plan.x_scale = x.scale_input;
  plan.w_data = w.data_input;
  plan.w_scale = w.scale_input;
  plan.x_scale_type = x.scale->dtype;
  plan.w_scale_type = w.scale->dtype;
  if (const auto& q = step.quantization.requantize) {
    if (!is_one_value(*q->scale))
      return unsupported("layer '{}': the scale {} of quantize '{}' is per-channel (fuses one scale)", layer,
                         q->scale->to_string(), q->layer->name);
    plan.requantize = true;
    plan.y_scale = q->scale_input;
    plan.y_scale_type = q->scale->dtype;
  }

  // fp32 scales only, as cublaslt.qmatmul: tensoracle calibrate writes fp32 scales; fp16/bf16
  // ones come from retyped networks (the op harness's fp16/bf16 variants), where the reference's
  // rounding of each dequantized operand to the product type differs from the fused sum by more
  // than the harness's fixed tolerances (docs/quantization.md) though not by more than its bound.
  for (const DataType scale_type : {plan.x_scale_type, plan.w_scale_type, plan.y_scale_type})
    if (scale_type != DataType::kFloat32)
      return unsupported("layer '{}': a {} scale (the fused form takes fp32 scales, which tensoracle calibrate writes)",
                         layer, data_type_name(scale_type));

  ConvProblem& packed = plan.packed;
  packed = p;
  packed.dtype = qx;
  packed.has_bias = false;
  packed.c = round_up(p.c, plan.channel_multiple);
  packed.k = round_up(p.k, plan.channel_multiple);
  if (p.groups != 1 && ((p.c / p.groups) % plan.channel_multiple != 0 || (p.k / p.groups) % plan.channel_multiple != 0))
    return unsupported("layer '{}': {} groups of {} -> {} channels: cuDNN's {} engines read channel vectors of {} per "
                       "group, and the fused form pads channels for one group only",
                       layer, p.groups, p.c / p.groups, p.k / p.groups, data_type_name(qx), plan.channel_multiple);
  packed.x_shape = Dims{p.n, packed.c, p.in[1], p.in[2]};
  packed.w_shape = Dims{packed.k, packed.c / p.groups, p.kernel[1], p.kernel[2]};
  packed.y_shape = Dims{p.n, packed.k, p.out[1], p.out[2]};
  packed.x_layout = packed.w_layout = packed.y_layout = Layout::kNhwc;
  plan.pack_x = !(p.x_layout == Layout::kNhwc && packed.c == p.c);
  plan.pack_w = !(p.w_layout == Layout::kNhwc && packed.c == p.c && packed.k == p.k);
  return plan;
}

}  // namespace tensoracle::backends::cuda
