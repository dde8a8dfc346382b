// "cutlass.qmatmul": Q/DQ-fused matrix products on our own CUTLASS kernels (sm90_qgemm.h), one
// kernel per step with the scales, bias, residual, activation and trailing quantize in its
// epilogue. It takes the steps "cublaslt.qmatmul" takes (qmatmul_plan.h: the same operands and
// scales), and those whose activation is gelu_erf (cuBLASLt's GELU is the tanh form), where
//
// - the GPU is compute capability 9.0 (the kernels are sm_90a code),
// - the product is fp16, and the step writes it or quantizes it to the operands' own type (int8
//   or fp8 e4m3; not after a residual), every scale fp32,
// - K is a multiple of 16 and N of 8, 16 with a quantized output (16-byte rows for the tensor
//   memory accelerator);
//
// On such a GPU the planner fuses a gelu_erf and the quantize after it into the product's step
// (plan_lowering.h: a step grows while some family takes it), which only this family runs.
//
// anything else is kUnsupported with the reason, and cuBLASLt's paths run it. Its candidates are
// its tile shapes (Sm90GemmTile), timed beside cuBLASLt's; a recorded choice {"tile": name} replays
// exactly that kernel.
#pragma once

#include <memory>

#include "backends/cuda/cublaslt/qmatmul_plan.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/cutlass/sm90_qgemm.h"

namespace tensoracle::backends::cuda {

std::shared_ptr<const TacticFamily> make_cutlass_qmatmul_family();  // kMatMul with quantize/dequantize layers

// The kernel for a step cuBLASLt's Q/DQ plan describes, on a device of compute capability `cc`
// (tile left at its default), or kUnsupported naming the layer and the reason. Host code.
Result<Sm90QuantizedGemm> sm90_gemm_for(const QuantizedMatmulPlan& plan, const std::string& layer, int cc);

}  // namespace tensoracle::backends::cuda
