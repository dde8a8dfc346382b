#include "backends/cuda/attention/batched_gemm.h"

#include <algorithm>

#include "backends/cuda/cuda_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {
namespace {

constexpr size_t kVectorAlignment = 16;  // what vectorized and TMA loads need

Result<cudaDataType_t> cuda_type(DataType type) {
  switch (type) {
    case DataType::kFloat32: return CUDA_R_32F;
    case DataType::kFloat16: return CUDA_R_16F;
    case DataType::kBFloat16: return CUDA_R_16BF;
    default: return unsupported("batched GEMM: type {}", data_type_name(type));
  }
}

Status set_layout(cublasLtMatrixLayout_t* layout, cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld,
                  int64_t batch, int64_t stride) {
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(layout, type, static_cast<uint64_t>(rows),
                                                       static_cast<uint64_t>(cols), ld));
  const int32_t count = static_cast<int32_t>(batch);
  TO_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  TO_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  return Status::ok();
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorAlignment == 0; }

}  // namespace

BatchedGemm::~BatchedGemm() { release(); }

void BatchedGemm::release() {
  // Destroy failures cannot be reported from a destructor and leave nothing to undo.
  if (lt_a_layout_) (void)cublasLtMatrixLayoutDestroy(lt_a_layout_);
  if (lt_b_layout_) (void)cublasLtMatrixLayoutDestroy(lt_b_layout_);
  if (lt_c_layout_) (void)cublasLtMatrixLayoutDestroy(lt_c_layout_);
  if (desc_) (void)cublasLtMatmulDescDestroy(desc_);
  lt_a_layout_ = lt_b_layout_ = lt_c_layout_ = nullptr;
  desc_ = nullptr;
  has_aligned_algo_ = false;
}

Status BatchedGemm::initialize(cublasLtHandle_t handle, const BatchedGemmShape& shape, size_t workspace_bytes) {
  release();
  shape_ = shape;
  workspace_bytes_ = workspace_bytes;
  if (shape.m == 0 || shape.n == 0 || shape.batch == 0) return Status::ok();
  if (shape.k == 0) return unsupported("batched GEMM: k = 0 (the caller fills C itself)");
  if (shape.batch > INT32_MAX) return unsupported("batched GEMM: {} matrices exceed cuBLASLt's int32 batch count", shape.batch);
  TO_ASSIGN_OR_RETURN(const cudaDataType_t ab, cuda_type(shape.ab_type));
  TO_ASSIGN_OR_RETURN(const cudaDataType_t c, cuda_type(shape.c_type));

  // cuBLASLt is column-major: the row-major C [m, n] is the column-major C^T [n, m], and
  // C^T = op(B)^T · A^T, so cuBLASLt's A is our B and its B is our A (row-major A [m, k] is the
  // column-major [k, m]).
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans_a = shape.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
  const int64_t ld_b = shape.b_transposed ? shape.k : shape.n;
  if (shape.b_transposed) TO_RETURN_IF_ERROR(set_layout(&lt_a_layout_, ab, shape.k, shape.n, ld_b, shape.batch, shape.b_stride));
  else TO_RETURN_IF_ERROR(set_layout(&lt_a_layout_, ab, shape.n, shape.k, ld_b, shape.batch, shape.b_stride));
  TO_RETURN_IF_ERROR(set_layout(&lt_b_layout_, ab, shape.k, shape.m, shape.k, shape.batch, shape.a_stride));
  TO_RETURN_IF_ERROR(set_layout(&lt_c_layout_, c, shape.n, shape.m, shape.n, shape.batch, shape.c_stride));

  const size_t ab_size = data_type_size(shape.ab_type), c_size = data_type_size(shape.c_type);
  auto multiple = [](int64_t elements, size_t size) { return static_cast<size_t>(elements) * size % kVectorAlignment == 0; };
  strides_aligned_ = multiple(shape.k, ab_size) && multiple(ld_b, ab_size) && multiple(shape.n, c_size) &&
                     (shape.batch == 1 || (multiple(shape.a_stride, ab_size) && multiple(shape.b_stride, ab_size) &&
                                           multiple(shape.c_stride, c_size)));

  auto pick = [&](uint32_t ab_alignment, uint32_t c_alignment, cublasLtMatmulAlgo_t* algo) -> Status {
    cublasLtMatmulPreference_t pref = nullptr;
    TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = workspace_bytes_;
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES})
      if (status == CUBLAS_STATUS_SUCCESS)
        status = cublasLtMatmulPreferenceSetAttribute(pref, attr, &ab_alignment, sizeof(ab_alignment));
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      if (status == CUBLAS_STATUS_SUCCESS)
        status = cublasLtMatmulPreferenceSetAttribute(pref, attr, &c_alignment, sizeof(c_alignment));
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulAlgoGetHeuristic(handle, desc_, lt_a_layout_, lt_b_layout_, lt_c_layout_, lt_c_layout_, pref, 1, &result,
                                              &found);
    (void)cublasLtMatmulPreferenceDestroy(pref);
    TO_RETURN_IF_ERROR(cublas_status(status, "cublasLtMatmulAlgoGetHeuristic"));
    if (found == 0)
      return unsupported("batched GEMM {}x{}x{} ({} x {} of {} -> {}): cuBLASLt offers no algorithm", shape.m, shape.n,
                         shape.k, shape.batch, shape.b_transposed ? "B^T" : "B", data_type_name(shape.ab_type),
                         data_type_name(shape.c_type));
    *algo = result.algo;
    return Status::ok();
  };
  TO_RETURN_IF_ERROR(pick(static_cast<uint32_t>(ab_size), static_cast<uint32_t>(c_size), &element_algo_));
  if (strides_aligned_) {
    TO_RETURN_IF_ERROR(pick(kVectorAlignment, kVectorAlignment, &aligned_algo_));
    has_aligned_algo_ = true;
  }
  return Status::ok();
}

Status BatchedGemm::run(cublasLtHandle_t handle, const void* a, const void* b, void* c, void* workspace,
                        cudaStream_t stream) const {
  if (shape_.m == 0 || shape_.n == 0 || shape_.batch == 0) return Status::ok();
  if (!desc_) return make_error(StatusCode::kInternal, "batched GEMM: run before initialize");
  const bool vector_aligned = has_aligned_algo_ && aligned(a) && aligned(b) && aligned(c);
  const float alpha = 1.0f, beta = 0.0f;
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmul(handle, desc_, &alpha, b, lt_a_layout_, a, lt_b_layout_, &beta, c, lt_c_layout_, c,
                                           lt_c_layout_, vector_aligned ? &aligned_algo_ : &element_algo_, workspace,
                                           workspace_bytes_, stream));
  return Status::ok();
}

}  // namespace tensoracle::backends::cuda
