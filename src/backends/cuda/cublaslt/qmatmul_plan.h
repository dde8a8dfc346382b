// How a Q/DQ-fused matmul step maps onto cuBLASLt (step.h: a kMatMul anchor whose two operands
// are dequantize layers of the step, with an optional epilogue and trailing quantize layer):
//
//   y = [Q_sy]( act( DQ(a_q, sa) · DQ(b_q, sb) [+ bias] [+ residual] ) )
//
// Pure host code: the family's can_implement, candidates and replay start here.
//
// - fp8 e4m3 (both operands): one cuBLASLt call with per-tensor device scales (A/B scale
//   pointers) and the bias/residual/relu/gelu_tanh epilogue; a trailing fp8 quantize of an fp16
//   or bf16 product is cuBLASLt's D scale (1/sy, computed on the device), any other trailing
//   quantize a quantize kernel on the product. Needs compute capability 8.9+.
// - int8 (both operands): the exact int32 product on cuBLASLt (CUBLAS_COMPUTE_32I), then one
//   epilogue kernel (qmatmul_epilogue.h): sa · sb[n] (per-tensor or per output channel), bias,
//   residual, activation and the trailing quantize, each rounded as the reference rounds it.
//   fp8 with per-channel weight scales runs the same way on the fp32 accumulator, or
//   (QuantizedMatmulForm::kChannelScalesInGemm) as one cuBLASLt call like per-tensor fp8, the
//   weight scales given to cuBLASLt as a vector (its outer-vector scale mode, lt_gemm.h) beside
//   the activation scale repeated once per row (cuBLASLt has no algorithm for a vector beside
//   one value).
// - explicit: the same step as its layers would run unfused -- dequantize kernels into the
//   workspace, a cuBLASLt GEMM in the dequantized type with the epilogue, a quantize kernel --
//   so the tactic timer measures fused against explicit.
//
// What it takes: `a` of any rank (batch dims fold into M), `b` a rank-2 weight stored [N, K]
// (transpose_b; passes.h transpose_dequantized_weights stores constant weights so), a
// per-tensor activation scale; weight scales per tensor or per channel along N; K and N multiples of 16 (fp8) or 4 (int8, cuBLASLt's rule for its int8 kernels).
// Anything else is kUnsupported with the reason, and the layers stay explicit (plan_lowering.h).
//
// fp8 with per-channel weight scales, with a bias on an fp32 product or with a trailing fp8
// quantize failed on the H200 (2026-12-03) with CUBLAS_STATUS_NOT_SUPPORTED and were not proposed
// until the cause was found: their scale pointers were 4 bytes apart, which cuBLASLt refuses
// (now 16, qmatmul_epilogue.h); they pass gpu_qmatmul_test on an H100 (2026-12-07). int8 takes
// fp32 scales only (qmatmul_plan.cpp says why).
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/cublaslt/lt_gemm.h"
#include "backends/cuda/cublaslt/matmul_plan.h"
#include "backends/cuda/step.h"

namespace tensoracle::backends::cuda {

struct QuantizedMatmulPlan {
  enum class Kind : uint8_t { kFp8, kInt8 };
  Kind kind = Kind::kFp8;
  // The step without its quantize/dequantize layers: the GEMM in the dequantized type with its
  // epilogue, on dequantized operands (the explicit path; its calls/offsets hold for both).
  MatmulPlan dequantized;
  LtGemmDesc gemm;  // the quantized GEMM
  int64_t rows = 0, cols = 0;  // of the product (M with the batch folded in, N)
  DataType product_type = DataType::kFloat32;  // the matmul's output type (the dequantize layers')
  DataType output_type = DataType::kFloat32;   // the step's output type
  // Step inputs (StepBuffers::inputs) of the quantized operands and their scales.
  size_t a_data = 0, a_scale = 0, b_data = 0, b_scale = 0;
  DataType a_scale_type = DataType::kFloat32, b_scale_type = DataType::kFloat32;
  bool b_per_channel = false;  // sb has N values
  bool requantize = false;     // a trailing quantize layer
  size_t y_scale = 0;          // its scale's step input
  DataType y_scale_type = DataType::kFloat32;
  // fp8 with requantize: cuBLASLt writes the quantized output itself (D scale); otherwise a
  // quantize kernel runs on the product.
  bool quantized_by_gemm = false;
  // The GEMM writes its bare accumulator (int32, or fp32 for fp8) and the epilogue kernel
  // (qmatmul_epilogue.h) applies the scales, bias, residual, activation and quantize: int8
  // always, fp8 with per-channel weight scales in the default form or
  // with a bias on an fp32 product (cuBLASLt takes only a bf16 one there).
  bool epilogue_kernel = false;

  std::string to_string() const;
};

// Which fused form a plan describes where a step has two (fp8 with per-channel weight scales).
enum class QuantizedMatmulForm : uint8_t {
  kDefault,               // as above: per-channel fp8 weight scales in the epilogue kernel
  kChannelScalesInGemm,   // per-channel fp8 weight scales in cuBLASLt's GEMM (fp32 scales)
};

// The plan for `step`, or kUnsupported naming the layer and what is not handled. `cc` is the
// device's compute capability (fp8 needs 89+). With EpilogueKernel::kOwn the epilogue may hold
// gelu_erf (for our own kernels; `gemm` then describes no cuBLASLt call).
Result<QuantizedMatmulPlan> plan_quantized_matmul(const StepInstance& step, int cc,
                                                  QuantizedMatmulForm form = QuantizedMatmulForm::kDefault,
                                                  EpilogueKernel epilogue = EpilogueKernel::kCublasLt);

}  // namespace tensoracle::backends::cuda
