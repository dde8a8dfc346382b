// The two products of the composed attention path as strided-batched cuBLASLt matmuls in
// row-major terms: C[i] = A[i] · B[i] (B stored [k, n]) or A[i] · B[i]^T (B stored [n, k]), for
// i < batch, each operand advancing by its own batch stride (0 = the same matrix for all).
//
// Accumulation is fp32 (CUBLAS_COMPUTE_32F: never TF32 for fp32 operands; fp16/bf16 operands
// run on tensor cores with fp32 accumulation). initialize() asks cuBLASLt's heuristics for one
// algorithm assuming 16-byte aligned pointers and one assuming only element alignment; run()
// takes the first when the pointers it gets allow it. (A local helper: the shared cuBLASLt
// wrapper of src/backends/cuda/cublaslt/ did not exist when this was written.)
#pragma once

#include <cublasLt.h>

#include <cstdint>

#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct BatchedGemmShape {
  DataType ab_type = DataType::kFloat32;  // A and B
  DataType c_type = DataType::kFloat32;   // C (written; not read: beta is 0)
  int64_t m = 0, n = 0, k = 0;
  bool b_transposed = false;  // B stored [n, k] (so the product uses B^T)
  int64_t batch = 1;
  int64_t a_stride = 0, b_stride = 0, c_stride = 0;  // elements between consecutive matrices
};

class BatchedGemm {
 public:
  BatchedGemm() = default;
  ~BatchedGemm();
  BatchedGemm(const BatchedGemm&) = delete;
  BatchedGemm& operator=(const BatchedGemm&) = delete;

  // Describes the product to cuBLASLt and picks its algorithms; `workspace_bytes` is what run()
  // will get. Fails (kUnsupported) when cuBLASLt has no algorithm for it.
  Status initialize(cublasLtHandle_t handle, const BatchedGemmShape& shape, size_t workspace_bytes);
  // Launches on `stream`. m, n or batch of 0: nothing to do.
  Status run(cublasLtHandle_t handle, const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) const;

 private:
  void release();

  BatchedGemmShape shape_;
  size_t workspace_bytes_ = 0;
  bool strides_aligned_ = false;  // every ld and batch stride is a multiple of 16 bytes
  cublasLtMatmulDesc_t desc_ = nullptr;
  // cuBLASLt's operands (column-major): its A is our B, its B our A, its C (and D) our C.
  cublasLtMatrixLayout_t lt_a_layout_ = nullptr, lt_b_layout_ = nullptr, lt_c_layout_ = nullptr;
  cublasLtMatmulAlgo_t aligned_algo_{}, element_algo_{};
  bool has_aligned_algo_ = false;
};

}  // namespace tensoracle::backends::cuda
