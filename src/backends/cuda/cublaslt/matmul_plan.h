// How a matmul step (step.h: a kMatMul anchor, optionally with a fused epilogue) maps onto
// LtGemm calls. Pure host code: the family's can_implement, candidates and replay all start here.
//
// numpy.matmul semantics (docs/ops.md, backends/cpu/matmul.cpp): a rank-1 `a` is a row vector, a
// rank-1 `b` a column vector, batch dims broadcast. The batch dims are reduced to one strided
// batch (stride 0 for a broadcast operand) plus, when the operands' batch strides cannot be
// expressed as one stride each (e.g. [2,1,M,K] x [3,K,N]), an outer loop of GEMM calls over the
// leading dims. When `b` is shared by the whole batch and `a` is stored untransposed, the batch
// is folded into M ([B,M,K] x [K,N] is one [B*M,K] x [K,N] product).
//
// Epilogues accepted (each step optional, at least one, in this order; every result of the
// output's type):
//   add(r, bias)      bias broadcast along rows: shape [N] or [1,..,1,N]   -> cuBLASLt bias
//   add(r, residual)  residual of exactly the output's shape               -> C with beta = 1
//   relu(r) | gelu_tanh(r)                                                 -> cuBLASLt RELU/GELU
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/cublaslt/lt_gemm.h"
#include "backends/cuda/step.h"

namespace tensoracle::backends::cuda {

struct MatmulPlan {
  enum class Kind : uint8_t {
    kEmpty,     // the output has no elements: nothing to do
    kZeroFill,  // K == 0 without epilogue: the output is all zeros
    kGemm,      // one LtGemm per call
  };
  // Element offsets of one GEMM call into A, B and D (C, the residual, shares D's offsets).
  struct Call {
    int64_t a = 0, b = 0, d = 0;
  };

  Kind kind = Kind::kGemm;
  LtGemmDesc gemm;          // kGemm: the (strided-batched) product each call runs
  std::vector<Call> calls;  // kGemm: at least one
  int bias_input = -1;      // index into StepBuffers::extra_inputs, or -1
  int residual_input = -1;  // index into StepBuffers::extra_inputs, or -1

  std::string to_string() const;  // for logs and test messages
};

// Whose epilogue computes the plan's: cuBLASLt's ([bias] [residual] [relu | gelu_tanh]) or our
// own kernels' (cutlass_families.h), which also take gelu_erf.
enum class EpilogueKernel : uint8_t { kCublasLt, kOwn };

// The plan for `step`, or kUnsupported naming the layer and exactly what is not handled (types,
// layouts, the epilogue's form). Pointers are assumed 16-byte aligned at their tensor's start;
// the plan lowers gemm.pointer_alignment when batch offsets break that.
Result<MatmulPlan> plan_matmul(const StepInstance& step, EpilogueKernel epilogue = EpilogueKernel::kCublasLt);

}  // namespace tensoracle::backends::cuda
