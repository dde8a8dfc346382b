// How a Q/DQ-fused convolution step maps onto cuDNN (step.h: a kConvolution anchor whose input
// and weight are dequantize layers of the step, with an optional bias input, epilogue and
// trailing quantize layer):
//
//   y = [Q_sy]( epilogue( conv(DQ(x_q, sx), DQ(w_q, sw[k])) [+ bias] ) )
//
// Pure host code: the family's can_implement, candidates and replay start here.
//
// - fused: x_q and w_q are copied channels-last with their channels zero-padded to a multiple
//   (x [N, Cp, H, W] as NHWC, w [Kp, Cp, R, S] as KRSC; zeros add nothing to a sum) unless they
//   already are so (the planner stores int8/fp8 tensors between such steps channels-last), cuDNN's
//   graph convolves them into the bare accumulator -- int32 for int8 (compute INT32), fp32 for
//   fp8 e4m3 (compute FLOAT) -- packed NHWC in the workspace, and one epilogue kernel
//   (qconv_kernels.h) applies sx * sw[k], the bias, the pointwise epilogue and the trailing
//   quantize, each rounded as the reference rounds it.
// - graph: the whole step in cuDNN's graph -- the quantized convolution, then x scale, weight
//   scale, bias, the epilogue and the division by the trailing quantize's scale as pointwise
//   operations on fp32 virtual tensors, written to the step's output in its type and layout
//   (cudnn_conv_graph.h). No accumulator in memory and no kernel of ours; intermediate values are
//   not rounded to the product type as the reference rounds them (the fp32 chain rounds once, as
//   the unquantized convolution's fused epilogue does). Offered where cuDNN has an engine for the
//   graph and K needs no padding.
// - explicit: the same step as its layers would run unfused -- dequantize kernels into the
//   workspace, the plain cuDNN convolution in the dequantized type, the convolution epilogue
//   kernel, a quantize kernel -- so the tactic timer measures the others against it, and a
//   graph cuDNN cannot run at build time simply loses.
//
// What cuDNN 9 offers here (its frontend's int8_fprop / fp8_fprop samples, which the fused graph
// follows): int8 x and w channels-last, INT32 compute and an int32 result, on Ampere (8.0) and
// newer; fp8 e4m3 x and w channels-last, FLOAT compute, on compute capability 8.9+ (cuDNN before
// 9.8: Hopper only). Channels are padded to 4 (int8: 4-byte vectors) or 16 (fp8: 16-byte
// vectors).
//
// What it takes: a 2-D convolution (rank-4 tensors), one group (padding channels per group is not
// done) or groups whose channel counts per group are multiples of 4 / 16, both operands
// dequantized in the step from the same quantized type, a per-tensor activation scale, weight
// scales per tensor or per output channel (the weight's axis 0), a per-tensor trailing quantize
// scale, fp32 scales, a bias input that is not itself dequantized, the epilogue conv_epilogue.h
// accepts. Anything else is kUnsupported with the reason, and the layers stay explicit
// (plan_lowering.h logs it).
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/cudnn/conv_epilogue.h"
#include "backends/cuda/cudnn/conv_problem.h"

namespace tensoracle::backends::cuda {

struct QuantizedConvPlan {
  DataType quantized = DataType::kInt8;      // x_q and w_q: int8 or fp8e4m3
  DataType accumulator = DataType::kInt32;   // the fused graph's result: int32 (int8) or fp32 (fp8)
  ConvProblem problem;   // the convolution of the dequantized operands (the explicit path's)
  ConvEpilogue epilogue;
  // What the fused graph convolves: `problem` with C and K padded to `channel_multiple`, x, w and
  // the accumulator packed channels-last, of the quantized type.
  ConvProblem packed;
  int64_t channel_multiple = 4;
  // Whether the fused path copies x / w into the packed form first; not where the step's own
  // tensor already is it (channels-last, plan_layouts.h, with C and K multiples already).
  bool pack_x = true, pack_w = true;
  DataType output_type = DataType::kFloat32;  // the step's output type
  // Step inputs (StepBuffers::inputs) of the quantized operands and their scales.
  size_t x_data = 0, x_scale = 0, w_data = 0, w_scale = 0;
  DataType x_scale_type = DataType::kFloat32, w_scale_type = DataType::kFloat32;
  bool w_per_channel = false;  // sw has K values
  bool requantize = false;     // a trailing quantize layer
  size_t y_scale = 0;          // its scale's step input
  DataType y_scale_type = DataType::kFloat32;

  std::string to_string() const;
};

// The plan for `step`, or kUnsupported naming the layer and what is not handled. `cc` is the
// device's compute capability (int8 needs 80+, fp8 89+).
Result<QuantizedConvPlan> plan_quantized_conv(const StepInstance& step, int cc);

}  // namespace tensoracle::backends::cuda
