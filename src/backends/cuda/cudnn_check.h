// cuDNN's error codes folded into Status (only files that talk to cuDNN include this).
#pragma once

#include <cudnn.h>

#include "core/errors.h"

namespace tensoracle::backends::cuda {

inline Status cudnn_status(cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return Status::ok();
  return make_error(StatusCode::kCudaError, "{} failed: {}", call, cudnnGetErrorString(status));
}

}  // namespace tensoracle::backends::cuda

#define TO_CUDNN_RETURN_IF_ERROR(expr) \
  TO_RETURN_IF_ERROR(::tensoracle::backends::cuda::cudnn_status((expr), #expr))
