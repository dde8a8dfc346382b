// Folds CUDA runtime, cuBLASLt and cuDNN error codes into Status (never exceptions, never abort): the
// message names the failing call as written in the source and the library's own error text.
//
//   TO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream));
//   TO_CUBLAS_RETURN_IF_ERROR(cublasLtMatmul(...));
//   TO_CUDNN_RETURN_IF_ERROR(cudnnSetStream(handle, stream));
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "core/errors.h"

namespace tensoracle::backends::cuda {

inline Status cuda_status(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return Status::ok();
  return make_error(StatusCode::kCudaError, "{} failed: {} ({})", call, cudaGetErrorString(error), cudaGetErrorName(error));
}

inline Status cublas_status(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::ok();
  const StatusCode code = status == CUBLAS_STATUS_NOT_SUPPORTED ? StatusCode::kUnsupported : StatusCode::kCudaError;
  return make_error(code, "{} failed: cuBLAS status {}", call, static_cast<int>(status));
}

// The launch status of the kernel just launched (errors in its configuration, not in its run).
inline Status last_launch_status(const char* kernel) { return cuda_status(cudaGetLastError(), kernel); }

}  // namespace tensoracle::backends::cuda

#define TO_CUDA_RETURN_IF_ERROR(expr) \
  TO_RETURN_IF_ERROR(::tensoracle::backends::cuda::cuda_status((expr), #expr))
#define TO_CUBLAS_RETURN_IF_ERROR(expr) \
  TO_RETURN_IF_ERROR(::tensoracle::backends::cuda::cublas_status((expr), #expr))
