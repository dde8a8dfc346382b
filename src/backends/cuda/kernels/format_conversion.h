// Conversions between a step's buffers (stored in a cuda Layout, device_tensor.h) and a plugin's
// tensors (stored in a TensorFormat, tensor_format.h): the reformat and cast the plugin family
// runs around a plugin whose negotiated formats differ from what its neighbours write and read
// (format_negotiation.h). HWC8 pads C to a multiple of 8: converting into it zeroes the storage
// first, so the padding channels hold zeros; converting out of it skips them.
//
// A conversion within one type is a strided copy (copy_strided.h: tiled for linear <-> channels-
// last, so both sides move in whole cache lines); across fp32, fp16 and bf16 it is one
// element-wise cast kernel walking both sides' strides.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/device_tensor.h"
#include "tensoracle/tensor_format.h"

namespace tensoracle::backends::cuda {

// A tensor in a plugin's storage: logical shape, its type and format, the address of
// format_storage_elements(format, shape) elements.
struct FormattedTensor {
  TypeFormat type_format;
  Dims shape;
  void* data = nullptr;
};

// Bytes of `t`'s storage.
Result<size_t> formatted_bytes(const TypeFormat& type_format, const Dims& shape);

// `in` (any layout but bshd) into `out` (same logical shape; type equal, or both among fp32,
// fp16, bf16) on `stream`.
Status launch_to_format(const DeviceTensor& in, const FormattedTensor& out, cudaStream_t stream);
// `in` back into `out` (same shape and type; out linear or nhwc) on `stream`.
Status launch_from_format(const FormattedTensor& in, const DeviceTensor& out, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
