// A row-major, strided-batched matrix product on cuBLASLt with fp32 accumulation (never TF32),
// reusable by any tactic that needs a GEMM (the matmul family, attention's Q·K^T and P·V):
//
//   D[b] = act(alpha · op(A[b]) · op(B[b]) + beta · C[b] + bias)        for b < batch_count
//
// op(A[b]) is [m, k], op(B[b]) is [k, n], C[b] and D[b] are [m, n], all row-major; bias is a
// vector of n elements added to every row. Matrix X[b] starts batch_stride_x elements after
// X[b-1]; a stride of 0 repeats one matrix for every batch (broadcast).
//
//   TO_ASSIGN_OR_RETURN(auto gemm, LtGemm::create(ctx.cublaslt, desc));   // initialize(): plans
//   ... gemm->workspace_size() bytes of workspace ...
//   TO_RETURN_IF_ERROR(gemm->run(args, ctx.stream, workspace, workspace_bytes));  // run(): launches
//
// cuBLASLt is column-major; LtGemm computes D^T = op(B)^T · op(A)^T on the same memory, so
// callers think in row-major only.
//
// Quantized inputs (Q/DQ fusion) take only the "TN" form cuBLASLt's fp8 and int8 tensor-core
// kernels have: A [m, k] stored untransposed, B stored [n, k] (transpose_b):
// - fp8 e4m3: fp32 accumulation, per-tensor (or outer-vector) device scales (fast_accumulation: cuBLASLt's fast
//   mode, whose tensor-core partial sums are not promoted to fp32 as they grow; faster, less exact):
//     D = d_scale · act(alpha · a_scale · b_scale · A·B + beta · C + bias)
//   (alpha one value, or one per column of D: alpha_per_column)
//   with D in fp16, bf16 or fp32, or in fp8 e4m3 (d_scale applies only then, saturating); C and
//   the bias are of `c_type` (fp16 or bf16 for an fp8 D, otherwise D's type; a bias with an fp32
//   D must be bf16, cuBLASLt's rule, so it is refused).
// - int8: exact int32 accumulation, D int32 = alpha · A·B (alpha 1, no epilogue); the caller
//   applies scales, bias and activation afterwards (cuBLASLt's alpha is one scalar).
//   cuBLASLt needs n and k to be multiples of 4 here.
//   
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

// The most workspace any LtGemm asks for (the heuristic only returns algorithms within it).
inline constexpr size_t kLtWorkspaceLimit = size_t{32} << 20;
// How many algorithms the heuristic is asked for; ranks index this list.
inline constexpr int kLtMaxAlgorithms = 32;

// cuBLASLt's GELU is the tanh form. kGeluErf is none of its epilogues: a plan with it is for our
// own kernels (matmul_plan.h EpilogueKernel::kOwn), and LtGemm refuses it.
enum class LtActivation : uint8_t { kNone, kRelu, kGeluTanh, kGeluErf };

struct LtGemmDesc {
  // A and B: fp32, fp16 or bf16 (the same), C, D and bias: the input type, or fp32; or quantized
  // inputs as above (fp8e4m3 or int8).
  DataType input_type = DataType::kFloat32;
  DataType output_type = DataType::kFloat32;
  // fp8 inputs with an fp8 output: the type of C and the bias (fp16 or bf16). Otherwise unused.
  DataType c_type = DataType::kFloat16;
  int64_t m = 0, n = 0, k = 0;  // each >= 1
  bool transpose_a = false;     // A[b] is stored [k, m] (else [m, k])
  bool transpose_b = false;     // B[b] is stored [n, k] (else [k, n])
  // Row pitch in elements of each stored matrix; 0 means packed (the stored row length).
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t batch_count = 1;
  int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0, batch_stride_d = 0;
  bool use_c = false;     // read C (beta applies); C and D must not overlap unless they are the same buffer with the same layout
  bool use_bias = false;  // bias of n output_type elements
  LtActivation activation = LtActivation::kNone;
  bool fast_accumulation = false;  // fp8 inputs only: CUBLASLT_MATMUL_DESC_FAST_ACCUM
  // fp8 inputs only: b_scale is n fp32 values, one per column of D (a per-output-channel weight
  // scale), and a_scale m values, one per row, instead of one value each: cuBLASLt's outer-vector
  // scale mode (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, cuBLAS 12.9+), multiplying D[i, j] by
  // a_scale[i] · b_scale[j]. kUnsupported where this cuBLASLt or GPU has no algorithm for it: on
  // an H100 (2026-12-07) a per-column b_scale has one only beside a per-row a_scale.
  bool b_scale_per_column = false, a_scale_per_row = false;
  // fp8 inputs only: alpha is n fp32 values in device memory, one per column of D, instead of
  // one value (cuBLASLt's ALPHA_DEVICE_VECTOR_BETA_HOST pointer mode on D^T, whose rows are our
  // columns): per-output-channel weight scales beside per-tensor A/B scales would need no vector
  // of the activation scale. kUnsupported where cuBLASLt has no algorithm for it, which on an
  // H200 with cuBLAS of CUDA 13.0 is every fp8 form (qmatmul_bench's probe, 2026-12-07), so only
  // that probe asks for it.
  bool alpha_per_column = false;
  // Alignment in bytes (a power of two) that every pointer given to run() has; algorithms that
  // need more are excluded. run() checks it.
  uint32_t pointer_alignment = 16;

  std::string to_string() const;  // "bf16 [8192x8192]x[8192x8192]->bf16 nn batch 1 ..."
};

struct LtGemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;  // when use_c
  void* d = nullptr;
  const void* bias = nullptr;  // when use_bias
  float alpha = 1.0f;
  const float* alpha_per_column = nullptr;  // n device values, instead of alpha (LtGemmDesc::alpha_per_column)
  float beta = 0.0f;  // when use_c
  // fp8 inputs: device pointers to one fp32 each (d_scale: when the output is fp8), or to a
  // vector (LtGemmDesc::b_scale_per_column, a_scale_per_row).
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  const float* d_scale = nullptr;
};

inline bool is_quantized_gemm_type(DataType t) { return t == DataType::kFloat8E4M3 || t == DataType::kInt8; }

class LtGemm {
 public:
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Validates `desc`, builds the cuBLASLt descriptors and asks the heuristic for up to
  // kLtMaxAlgorithms algorithms within kLtWorkspaceLimit (fp32 inputs: algorithms that would
  // down-convert to TF32/fp16/bf16 are dropped), then selects `rank` of that list (rank 0 when
  // the list is shorter). When that algorithm needs more than `max_workspace` bytes, the
  // best-ranked one within it is selected instead (the recorded rank was chosen at other shapes).
  // kUnsupported when cuBLASLt has no algorithm for it within the limits.
  static Result<std::unique_ptr<LtGemm>> create(cublasLtHandle_t handle, const LtGemmDesc& desc, int rank = 0,
                                                size_t max_workspace = kLtWorkspaceLimit);

  const LtGemmDesc& desc() const { return desc_; }
  int algorithm_count() const { return static_cast<int>(algorithms_.size()); }
  int selected_rank() const { return rank_; }
  // Workspace bytes the selected algorithm needs (<= kLtWorkspaceLimit).
  size_t workspace_size() const;

  // Launches the product on `stream` with `handle` (the one create() planned with, or another on
  // the same device). Only launches: no allocation, no synchronization. Host-side, run() sets
  // the bias (and fp8 scale) pointers in the matmul descriptor, so one LtGemm must not run on two
  // threads at once.
  Status run(cublasLtHandle_t handle, const LtGemmArgs& args, cudaStream_t stream, void* workspace,
             size_t workspace_bytes);

 private:
  LtGemm() = default;
  Status build();

  LtGemmDesc desc_;
  cublasLtMatmulDesc_t matmul_ = nullptr;
  cublasLtMatrixLayout_t layout_a_ = nullptr, layout_b_ = nullptr, layout_c_ = nullptr, layout_d_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algorithms_;
  int rank_ = 0;
};

}  // namespace tensoracle::backends::cuda
