#include "backends/cuda/cublaslt/lt_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "backends/cuda/cuda_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

Result<cudaDataType_t> cuda_type(DataType type) {
  switch (type) {
    case DataType::kFloat32: return CUDA_R_32F;
    case DataType::kFloat16: return CUDA_R_16F;
    case DataType::kBFloat16: return CUDA_R_16BF;
    case DataType::kFloat8E4M3: return CUDA_R_8F_E4M3;
    case DataType::kInt8: return CUDA_R_8I;
    case DataType::kInt32: return CUDA_R_32I;
    default:
      return unsupported("cuBLASLt GEMM: element type {} (takes fp32, fp16, bf16, fp8e4m3, int8, int32)", data_type_name(type));
  }
}

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// A stored row-major [rows, cols] matrix with row pitch `ld` is the column-major [cols, rows]
// matrix with leading dimension `ld`.
Status create_layout(cublasLtMatrixLayout_t* layout, cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld,
                     int64_t batch_count, int64_t batch_stride) {
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(layout, type, static_cast<uint64_t>(cols),
                                                       static_cast<uint64_t>(rows), ld));
  if (batch_count > 1) {
    const int32_t count = static_cast<int32_t>(batch_count);
    TO_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                               &batch_stride, sizeof(batch_stride)));
  }
  return Status::ok();
}

cublasLtEpilogue_t epilogue_of(LtActivation activation, bool bias) {
  switch (activation) {
    case LtActivation::kRelu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case LtActivation::kGeluTanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case LtActivation::kGeluErf:  // refused before any descriptor is made (validate)
    case LtActivation::kNone: break;
  }
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

const char* activation_name(LtActivation activation) {
  switch (activation) {
    case LtActivation::kRelu: return "relu";
    case LtActivation::kGeluTanh: return "gelu_tanh";
    case LtActivation::kGeluErf: return "gelu_erf";
    case LtActivation::kNone: break;
  }
  return "none";
}

// fp32 products must be computed from fp32 inputs: CUBLAS_COMPUTE_32F already excludes TF32;
// this drops any algorithm that reports otherwise (or a 16-bit accumulator), as a second guard.
Result<bool> keeps_precision(const cublasLtMatmulAlgo_t& algo, DataType input_type) {
  uint64_t flags = 0;
  size_t written = 0;
  TO_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &flags, sizeof(flags), &written));
  if (flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_16F) return false;
  const uint64_t down_converting =
      CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_TF32 | CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F | CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16BF;
  if (input_type == DataType::kFloat32 && (flags & down_converting)) return false;
  return true;
}

}  // namespace

std::string LtGemmDesc::to_string() const {
  return fmt::format("{} [{}x{}]{}x[{}x{}]{} -> {} batch {} (strides a {} b {} c {} d {}){}{}{}{}{}{}",
                     data_type_name(input_type), m, k, transpose_a ? "(stored T)" : "", k, n,
                     transpose_b ? "(stored T)" : "", data_type_name(output_type), batch_count, batch_stride_a,
                     batch_stride_b, batch_stride_c, batch_stride_d, use_c ? " +C" : "", use_bias ? " +bias" : "",
                     activation == LtActivation::kNone ? "" : fmt::format(" {}", activation_name(activation)),
                     fast_accumulation ? " fast-accumulation" : "",
                     b_scale_per_column || a_scale_per_row
                         ? fmt::format(" vector scales ({}{})", b_scale_per_column ? "b per column" : "",
                                       a_scale_per_row ? (b_scale_per_column ? ", a per row" : "a per row") : "")
                         : "",
                     alpha_per_column ? " alpha per column" : "");
}

LtGemm::~LtGemm() {
  // Destroy calls cannot fail on valid descriptors; nothing useful to do with an error here.
  if (preference_) cublasLtMatmulPreferenceDestroy(preference_);
  if (layout_d_) cublasLtMatrixLayoutDestroy(layout_d_);
  if (layout_c_) cublasLtMatrixLayoutDestroy(layout_c_);
  if (layout_b_) cublasLtMatrixLayoutDestroy(layout_b_);
  if (layout_a_) cublasLtMatrixLayoutDestroy(layout_a_);
  if (matmul_) cublasLtMatmulDescDestroy(matmul_);
}

Result<std::unique_ptr<LtGemm>> LtGemm::create(cublasLtHandle_t handle, const LtGemmDesc& desc, int rank,
                                               size_t max_workspace) {
  std::unique_ptr<LtGemm> gemm(new LtGemm());
  gemm->desc_ = desc;
  TO_RETURN_IF_ERROR(gemm->build());

  std::vector<cublasLtMatmulHeuristicResult_t> results(kLtMaxAlgorithms);
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle, gemm->matmul_, gemm->layout_a_, gemm->layout_b_, gemm->layout_c_ ? gemm->layout_c_ : gemm->layout_d_,
      gemm->layout_d_, gemm->preference_, kLtMaxAlgorithms, results.data(), &returned);
  if (status != CUBLAS_STATUS_SUCCESS && status != CUBLAS_STATUS_NOT_SUPPORTED)
    return cublas_status(status, "cublasLtMatmulAlgoGetHeuristic");
  for (int i = 0; status == CUBLAS_STATUS_SUCCESS && i < returned; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    TO_ASSIGN_OR_RETURN(const bool keep, keeps_precision(results[i].algo, desc.input_type));
    if (keep) gemm->algorithms_.push_back(results[i]);
  }
  if (gemm->algorithms_.empty())
    return unsupported("cuBLASLt has no algorithm for {} within {} MiB of workspace", desc.to_string(),
                       kLtWorkspaceLimit >> 20);
  gemm->rank_ = rank >= 0 && rank < gemm->algorithm_count() ? rank : 0;
  if (gemm->workspace_size() > max_workspace) {
    const auto fits = std::find_if(gemm->algorithms_.begin(), gemm->algorithms_.end(),
                                   [&](const cublasLtMatmulHeuristicResult_t& r) { return r.workspaceSize <= max_workspace; });
    if (fits == gemm->algorithms_.end())
      return unsupported("cuBLASLt has no algorithm for {} within the {} bytes of workspace given", desc.to_string(),
                         max_workspace);
    gemm->rank_ = static_cast<int>(fits - gemm->algorithms_.begin());
  }
  return gemm;
}

Status LtGemm::build() {
  const LtGemmDesc& d = desc_;
  if (d.m < 1 || d.n < 1 || d.k < 1)
    return invalid_argument("cuBLASLt GEMM: m, n, k must be >= 1 (got {}, {}, {})", d.m, d.n, d.k);
  if (d.m > kInt32Max || d.n > kInt32Max || d.k > kInt32Max || d.batch_count > kInt32Max)
    return unsupported("cuBLASLt GEMM: m={} n={} k={} batch={} exceed 2^31-1", d.m, d.n, d.k, d.batch_count);
  if (d.batch_count < 1) return invalid_argument("cuBLASLt GEMM: batch count {} < 1", d.batch_count);
  TO_ASSIGN_OR_RETURN(const cudaDataType_t in_type, cuda_type(d.input_type));
  TO_ASSIGN_OR_RETURN(const cudaDataType_t out_type, cuda_type(d.output_type));
  const bool fp8 = d.input_type == DataType::kFloat8E4M3, int8 = d.input_type == DataType::kInt8;
  const bool fp8_out = fp8 && d.output_type == DataType::kFloat8E4M3;
  if (d.activation == LtActivation::kGeluErf)
    return unsupported("cuBLASLt GEMM: gelu_erf is not a cuBLASLt epilogue (its GELU is the tanh form): {}", d.to_string());
  if (d.fast_accumulation && !fp8)
    return invalid_argument("cuBLASLt GEMM: fast accumulation is an fp8 mode, not one for {}", d.to_string());
  if ((d.b_scale_per_column || d.a_scale_per_row || d.alpha_per_column) && !fp8)
    return invalid_argument("cuBLASLt GEMM: vector scales are an fp8 mode, not one for {}", d.to_string());
  if (fp8 || int8) {
    if (d.transpose_a || !d.transpose_b)
      return unsupported("cuBLASLt GEMM: {} inputs take only A [m, k] untransposed and B stored [n, k] (the TN form), not {}",
                         data_type_name(d.input_type), d.to_string());
    if (int8 && (d.output_type != DataType::kInt32 || d.use_c || d.use_bias || d.activation != LtActivation::kNone))
      return unsupported("cuBLASLt GEMM: int8 inputs produce int32 without epilogue here, not {}", d.to_string());
    if (int8 && (d.n % 4 != 0 || d.k % 4 != 0))
      return unsupported("cuBLASLt GEMM: int8 needs n and k to be multiples of 4 (n {}, k {})", d.n, d.k);
    if (fp8 && d.output_type != DataType::kFloat16 && d.output_type != DataType::kBFloat16 &&
        d.output_type != DataType::kFloat32 && !fp8_out)
      return unsupported("cuBLASLt GEMM: fp8 inputs produce fp16, bf16, fp32 or fp8e4m3, not {}", data_type_name(d.output_type));
    if (fp8_out && d.c_type != DataType::kFloat16 && d.c_type != DataType::kBFloat16)
      return unsupported("cuBLASLt GEMM: an fp8 output needs C of fp16 or bf16, not {}", data_type_name(d.c_type));
    if (fp8 && d.output_type == DataType::kFloat32 && d.use_bias)
      return unsupported("cuBLASLt GEMM: fp8 inputs with an fp32 output take a bf16 bias only: {}", d.to_string());
  } else if (d.output_type != d.input_type && d.output_type != DataType::kFloat32) {
    return unsupported("cuBLASLt GEMM: {} inputs cannot produce {} (the input type or fp32)",
                       data_type_name(d.input_type), data_type_name(d.output_type));
  }
  TO_ASSIGN_OR_RETURN(const cudaDataType_t c_type, cuda_type(fp8_out ? d.c_type : d.output_type));
  if (!is_power_of_two(d.pointer_alignment))
    return invalid_argument("cuBLASLt GEMM: pointer alignment {} is not a power of two", d.pointer_alignment);

  // Stored shapes and row pitches (row-major).
  const int64_t a_rows = d.transpose_a ? d.k : d.m, a_cols = d.transpose_a ? d.m : d.k;
  const int64_t b_rows = d.transpose_b ? d.n : d.k, b_cols = d.transpose_b ? d.k : d.n;
  const int64_t lda = d.lda ? d.lda : a_cols, ldb = d.ldb ? d.ldb : b_cols;
  const int64_t ldc = d.ldc ? d.ldc : d.n, ldd = d.ldd ? d.ldd : d.n;
  if (lda < a_cols || ldb < b_cols || ldc < d.n || ldd < d.n)
    return invalid_argument("cuBLASLt GEMM: a row pitch is shorter than its row (lda {} ldb {} ldc {} ldd {}) for {}",
                            lda, ldb, ldc, ldd, d.to_string());

  // Column-major view: D^T[n, m] = op(B)^T[n, k] · op(A)^T[k, m]. cuBLASLt's A is our B and its
  // B is our A; each keeps its own transpose flag.
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&matmul_, int8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F,
                                                     int8 ? CUDA_R_32I : CUDA_R_32F));
  if (fp8) {
    // The heuristic needs to know the scales are device pointers; run() sets the real ones.
    const void* placeholder = reinterpret_cast<const void*>(uintptr_t{16});
    for (const auto attribute : {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER})
      TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(matmul_, attribute, &placeholder, sizeof(placeholder)));
    if (fp8_out)
      TO_CUBLAS_RETURN_IF_ERROR(
          cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &placeholder, sizeof(placeholder)));
    // cuBLASLt's A is our B (the weight, per column of D) and its B our A (per row of D).
    for (const auto& [vector, attribute] : {std::pair{d.b_scale_per_column, CUBLASLT_MATMUL_DESC_A_SCALE_MODE},
                                            std::pair{d.a_scale_per_row, CUBLASLT_MATMUL_DESC_B_SCALE_MODE}}) {
      if (!vector) continue;
      const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
      const cublasStatus_t set = cublasLtMatmulDescSetAttribute(matmul_, attribute, &mode, sizeof(mode));
      if (set != CUBLAS_STATUS_SUCCESS)
        return unsupported("cuBLASLt GEMM: this cuBLASLt has no outer-vector scale mode (cuBLAS status {}) for {}",
                           static_cast<int>(set), d.to_string());
    }
    if (d.alpha_per_column) {
      const int32_t mode = CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST;
      TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof(mode)));
    }
    const int8_t fast = d.fast_accumulation ? 1 : 0;
    TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
  }
  const int32_t op_b = d.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t op_a = d.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_TRANSA, &op_b, sizeof(op_b)));
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_TRANSB, &op_a, sizeof(op_a)));
  const uint32_t epilogue = epilogue_of(d.activation, d.use_bias);
  TO_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  if (d.use_bias) {
    // The bias has C's type (cuBLASLt's rule for fp16/bf16 outputs, and for fp8 ones; said explicitly).
    const int32_t bias_type = c_type;
    TO_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
    // The heuristic reads the bias pointer's alignment from its value: stand in with one that
    // has exactly the promised alignment; run() sets the real one.
    const void* placeholder = reinterpret_cast<const void*>(static_cast<uintptr_t>(d.pointer_alignment));
    TO_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &placeholder, sizeof(placeholder)));
  }

  TO_RETURN_IF_ERROR(create_layout(&layout_a_, in_type, b_rows, b_cols, ldb, d.batch_count, d.batch_stride_b));
  TO_RETURN_IF_ERROR(create_layout(&layout_b_, in_type, a_rows, a_cols, lda, d.batch_count, d.batch_stride_a));
  if (d.use_c || fp8_out) TO_RETURN_IF_ERROR(create_layout(&layout_c_, c_type, d.m, d.n, ldc, d.batch_count, d.batch_stride_c));
  TO_RETURN_IF_ERROR(create_layout(&layout_d_, out_type, d.m, d.n, ldd, d.batch_count, d.batch_stride_d));

  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&preference_));
  const uint64_t workspace = kLtWorkspaceLimit;
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                 &workspace, sizeof(workspace)));
  for (const auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                               CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    const uint32_t alignment = d.pointer_alignment;
    TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(preference_, attribute, &alignment, sizeof(alignment)));
  }
  return Status::ok();
}

size_t LtGemm::workspace_size() const { return algorithms_[static_cast<size_t>(rank_)].workspaceSize; }

Status LtGemm::run(cublasLtHandle_t handle, const LtGemmArgs& args, cudaStream_t stream, void* workspace,
                   size_t workspace_bytes) {
  const auto misaligned = [&](const void* p) { return reinterpret_cast<uintptr_t>(p) % desc_.pointer_alignment != 0; };
  if (misaligned(args.a) || misaligned(args.b) || misaligned(args.d) || (desc_.use_c && misaligned(args.c)) ||
      (desc_.use_bias && misaligned(args.bias)))
    return invalid_argument("cuBLASLt GEMM {}: a buffer is not {}-byte aligned (a {} b {} c {} d {} bias {})",
                            desc_.to_string(), desc_.pointer_alignment, args.a, args.b, args.c,
                            static_cast<const void*>(args.d), args.bias);
  const cublasLtMatmulHeuristicResult_t& algorithm = algorithms_[static_cast<size_t>(rank_)];
  if (workspace_bytes < algorithm.workspaceSize || (algorithm.workspaceSize > 0 && workspace == nullptr))
    return invalid_argument("cuBLASLt GEMM {}: needs {} bytes of workspace, got {}", desc_.to_string(),
                            algorithm.workspaceSize, workspace_bytes);
  if (desc_.use_bias)
    TO_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &args.bias, sizeof(args.bias)));
  const bool fp8 = desc_.input_type == DataType::kFloat8E4M3, int8 = desc_.input_type == DataType::kInt8;
  const bool fp8_out = fp8 && desc_.output_type == DataType::kFloat8E4M3;
  if (fp8) {
    if (!args.a_scale || !args.b_scale || (fp8_out && !args.d_scale) || (desc_.alpha_per_column && !args.alpha_per_column))
      return invalid_argument("cuBLASLt GEMM {}: fp8 needs device scale pointers (a {} b {} d {} alpha {})", desc_.to_string(),
                              static_cast<const void*>(args.a_scale), static_cast<const void*>(args.b_scale),
                              static_cast<const void*>(args.d_scale), static_cast<const void*>(args.alpha_per_column));
    // cuBLASLt's A is our B (column-major view, build()).
    TO_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &args.b_scale, sizeof(args.b_scale)));
    TO_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &args.a_scale, sizeof(args.a_scale)));
    if (fp8_out)
      TO_CUBLAS_RETURN_IF_ERROR(
          cublasLtMatmulDescSetAttribute(matmul_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &args.d_scale, sizeof(args.d_scale)));
  }
  const float beta = desc_.use_c ? args.beta : 0.0f;
  // Not read when beta is 0; an fp8 output's C has another type than D, so it cannot alias D.
  const void* c = desc_.use_c ? args.c : fp8_out ? nullptr : args.d;
  const int32_t int_alpha = 1, int_beta = 0;  // int8: the scale type is int32
  const void* alpha = int8                      ? static_cast<const void*>(&int_alpha)
                      : desc_.alpha_per_column ? static_cast<const void*>(args.alpha_per_column)
                                               : &args.alpha;
  const void* beta_value = int8 ? static_cast<const void*>(&int_beta) : &beta;
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmul(handle, matmul_, alpha, args.b, layout_a_, args.a, layout_b_, beta_value, c,
                                           layout_c_ ? layout_c_ : layout_d_, args.d, layout_d_, &algorithm.algo,
                                           workspace, algorithm.workspaceSize, stream));
  return Status::ok();
}

}  // namespace tensoracle::backends::cuda
