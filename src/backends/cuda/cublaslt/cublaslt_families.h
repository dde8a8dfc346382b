// The matrix-product families: "cublaslt.matmul" (cublaslt_families.cpp says how it chooses) and
// "cublaslt.qmatmul", Q/DQ-fused products (qmatmul_plan.h).
#pragma once

#include <memory>
#include <string>

#include "backends/cuda/cublaslt/lt_gemm.h"

#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

std::shared_ptr<const TacticFamily> make_cublaslt_matmul_family();   // kMatMul
std::shared_ptr<const TacticFamily> make_cublaslt_qmatmul_family();  // kMatMul with quantize/dequantize layers

// can_implement's question to cuBLASLt: ok when it has an algorithm for `desc` (or when it cannot
// be asked: no GPU, and then the plan alone decides), else its refusal naming `layer`. Asking
// leaves a layer cuBLASLt cannot run at some type, epilogue or alignment unfused (or Q/DQ
// explicit) instead of failing the build.
Status cublaslt_can_run(const LtGemmDesc& desc, const std::string& layer);

}  // namespace tensoracle::backends::cuda
