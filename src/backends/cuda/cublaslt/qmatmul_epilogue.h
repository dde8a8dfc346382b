// The device side of the Q/DQ-fused matmul (qmatmul_plan.h) that cuBLASLt does not do.
//
// launch_quantized_epilogue: y[m, n] from the GEMM's accumulator acc[m, n] (int32 for int8,
// fp32 for fp8 with per-channel weight scales), each step rounded to the type
// the unfused layers would round it to (the CPU reference's order, computed in fp64):
//   p = round_T(acc · sa · sb[n | 0])              the matmul of the dequantized operands, T = product type
//   p = round_T(p + bias[n])                      optional
//   p = round_T(p + residual[m, n])               optional
//   p = round_T(relu(p) | gelu_tanh(p))           optional
//   y = Q(p) = int8: rint(p / sy) saturated, NaN -> 0; fp8e4m3: rounded to nearest even, saturated
//       (fp32 division, as quantize_kernel.h)  optional; else y = p
// The only difference from the reference is in the first line: the reference sums the products
// of the separately rounded dequantized values (round_T(qa·sa) · round_T(qb·sb)) where this
// scales the exact integer sum (fp8: the fp32 sum) once.
//
// launch_fp8_gemm_scales: out[0] = sa, out[kFp8ScaleSpacing] = sb, out[2 * kFp8ScaleSpacing] =
// 1 / sy, as fp32 for cuBLASLt's A/B/D scale pointers; 1 for each scale not given (null). Each
// starts 16 bytes after the one before: with them 4 bytes apart cuBLASLt refuses the GEMM
// (NOT_SUPPORTED; qmatmul_bench's probe on an H100, 2026-12-07), as it did three fused fp8 forms
// on the H200 before (qmatmul_plan.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct QuantizedEpilogueArgs {
  DataType acc_type = DataType::kInt32;  // int32 or fp32
  int64_t rows = 0, cols = 0;
  DataType product_type = DataType::kFloat32;
  const void* a_scale = nullptr;
  DataType a_scale_type = DataType::kFloat32;
  const void* b_scale = nullptr;  // one value, or `cols` when b_per_channel
  DataType b_scale_type = DataType::kFloat32;
  bool b_per_channel = false;
  const void* bias = nullptr;      // [cols] of product_type, or null
  const void* residual = nullptr;  // [rows, cols] of product_type, or null
  int activation = 0;              // 0 none, 1 relu, 2 gelu_tanh
  const void* y_scale = nullptr;   // the trailing quantize's scale, or null
  DataType y_scale_type = DataType::kFloat32;
  DataType output_type = DataType::kFloat32;  // product_type, or int8/fp8e4m3 with y_scale
};

cudaError_t launch_quantized_epilogue(const void* acc, void* y, const QuantizedEpilogueArgs& args, cudaStream_t stream);

inline constexpr int kFp8ScaleSpacing = 4;  // floats between the scales launch_fp8_gemm_scales writes

cudaError_t launch_fp8_gemm_scales(const void* a_scale, DataType a_type, const void* b_scale, DataType b_type,
                                   const void* y_scale, DataType y_type, float* out, cudaStream_t stream);

// launch_fp8_row_scales: row_scales[0, rows) = the one fp32 activation scale, and *d_scale = 1 / sy
// (1 when y_scale is null). cuBLASLt's outer-vector scale mode has no algorithm for per-column
// weight scales beside a one-value activation scale (NOT_SUPPORTED; qmatmul_bench's probe on an
// H100, 2026-12-07), so the activation scale goes in as a vector too.
cudaError_t launch_fp8_row_scales(const float* a_scale, int64_t rows, const void* y_scale, DataType y_type,
                                  float* row_scales, float* d_scale, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
