// Layout <-> format conversions around plugins (format_conversion.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/copy_strided.h"
#include "backends/cuda/kernels/format_conversion.h"

#include <algorithm>
#include <vector>

namespace tensoracle::backends::cuda {

namespace {

// Element strides of both sides over one logical shape.
struct ConversionArgs {
  int rank = 0;
  int64_t count = 0;
  int64_t shape[StridedCopy::kMaxRank] = {};
  int64_t in_stride[StridedCopy::kMaxRank] = {};
  int64_t out_stride[StridedCopy::kMaxRank] = {};
};

template <typename T>
__device__ __forceinline__ float load_float(const T* p) {
  return static_cast<float>(*p);
}
template <typename T>
__device__ __forceinline__ void store_float(T* p, float v) {
  *p = static_cast<T>(v);
}
template <>
__device__ __forceinline__ void store_float<__half>(__half* p, float v) {
  *p = __float2half_rn(v);
}
template <>
__device__ __forceinline__ void store_float<__nv_bfloat16>(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}

template <typename In, typename Out>
__global__ void cast_kernel(const In* __restrict__ in, Out* __restrict__ out, ConversionArgs a) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, in_offset = 0, out_offset = 0;
    for (int d = a.rank - 1; d >= 0; --d) {
      const int64_t c = rest % a.shape[d];
      rest /= a.shape[d];
      in_offset += c * a.in_stride[d];
      out_offset += c * a.out_stride[d];
    }
    store_float(out + out_offset, load_float(in + in_offset));
  }
}

template <typename In, typename Out>
cudaError_t launch_cast(const void* in, void* out, const ConversionArgs& a, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((a.count + kThreads - 1) / kThreads, 65535);
  cast_kernel<In, Out><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(static_cast<const In*>(in),
                                                                               static_cast<Out*>(out), a);
  return cudaGetLastError();
}

template <typename In>
cudaError_t launch_cast_from(const void* in, DataType out_type, void* out, const ConversionArgs& a, cudaStream_t stream) {
  switch (out_type) {
    case DataType::kFloat32: return launch_cast<In, float>(in, out, a, stream);
    case DataType::kFloat16: return launch_cast<In, __half>(in, out, a, stream);
    case DataType::kBFloat16: return launch_cast<In, __nv_bfloat16>(in, out, a, stream);
    default: return cudaErrorInvalidValue;
  }
}

bool castable(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16; }

// in (type, strides) -> out (type, strides), both over `shape`.
Status convert(const void* in, DataType in_type, const std::vector<int64_t>& in_strides, void* out, DataType out_type,
               const std::vector<int64_t>& out_strides, const Dims& shape, cudaStream_t stream) {
  if (shape.rank() > static_cast<size_t>(StridedCopy::kMaxRank))
    return unsupported("format conversion of rank {} (at most {})", shape.rank(), StridedCopy::kMaxRank);
  TO_ASSIGN_OR_RETURN(const int64_t count, shape.element_count());
  if (count == 0) return Status::ok();
  if (in_type == out_type) {
    StridedCopy copy;
    copy.rank = static_cast<int>(shape.rank());
    for (size_t d = 0; d < shape.rank(); ++d) {
      copy.shape[d] = shape[d];
      copy.in_stride[d] = in_strides[d];
      copy.out_stride[d] = out_strides[d];
    }
    return cuda_status(launch_strided_copy(in, out, data_type_size(in_type), copy, CopyKernel::kAuto, stream),
                       "format conversion (copy)");
  }
  if (!castable(in_type) || !castable(out_type))
    return unsupported("format conversion from {} to {}: casts are among fp32, fp16 and bf16", data_type_name(in_type),
                       data_type_name(out_type));
  ConversionArgs a;
  a.rank = static_cast<int>(shape.rank());
  a.count = count;
  for (size_t d = 0; d < shape.rank(); ++d) {
    a.shape[d] = shape[d];
    a.in_stride[d] = in_strides[d];
    a.out_stride[d] = out_strides[d];
  }
  cudaError_t error = cudaErrorInvalidValue;
  switch (in_type) {
    case DataType::kFloat32: error = launch_cast_from<float>(in, out_type, out, a, stream); break;
    case DataType::kFloat16: error = launch_cast_from<__half>(in, out_type, out, a, stream); break;
    case DataType::kBFloat16: error = launch_cast_from<__nv_bfloat16>(in, out_type, out, a, stream); break;
    default: break;
  }
  return cuda_status(error, "format conversion (cast kernel)");
}

Status check_layout(const DeviceTensor& t) {
  if (t.layout == Layout::kBshd) return unsupported("format conversion of a {} tensor", layout_name(t.layout));
  if (t.layout == Layout::kNhwc && t.shape.rank() != 4)
    return invalid_argument("a {} tensor must have rank 4, got shape {}", layout_name(t.layout), t.shape.to_string());
  return Status::ok();
}

}  // namespace

Result<size_t> formatted_bytes(const TypeFormat& type_format, const Dims& shape) {
  TO_ASSIGN_OR_RETURN(const int64_t elements, format_storage_elements(type_format.format, shape));
  return static_cast<size_t>(elements) * data_type_size(type_format.type);
}

Status launch_to_format(const DeviceTensor& in, const FormattedTensor& out, cudaStream_t stream) {
  if (in.shape != out.shape)
    return invalid_argument("format conversion from {} to {}: the shapes differ", in.shape.to_string(), out.shape.to_string());
  TO_RETURN_IF_ERROR(check_layout(in));
  TO_RETURN_IF_ERROR(check_format_applies(out.type_format, out.shape));
  TO_ASSIGN_OR_RETURN(const int64_t count, out.shape.element_count());
  TO_ASSIGN_OR_RETURN(const int64_t storage, format_storage_elements(out.type_format.format, out.shape));
  if (storage > count)  // HWC8's padding channels
    TO_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(out.data, 0, static_cast<size_t>(storage) * data_type_size(out.type_format.type), stream));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> out_strides, format_strides(out.type_format.format, out.shape));
  return convert(in.data, in.dtype, element_strides(in.shape, in.layout), out.data, out.type_format.type, out_strides,
                 in.shape, stream);
}

Status launch_from_format(const FormattedTensor& in, const DeviceTensor& out, cudaStream_t stream) {
  if (in.shape != out.shape || in.type_format.type != out.dtype)
    return invalid_argument("format conversion from {}{} to {}{}: type and shape must agree",
                            type_format_name(in.type_format), in.shape.to_string(), data_type_name(out.dtype),
                            out.shape.to_string());
  TO_RETURN_IF_ERROR(check_layout(out));
  TO_RETURN_IF_ERROR(check_format_applies(in.type_format, in.shape));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> in_strides, format_strides(in.type_format.format, in.shape));
  return convert(in.data, in.type_format.type, in_strides, out.data, out.dtype, element_strides(out.shape, out.layout), out.shape,
                 stream);
}

}  // namespace tensoracle::backends::cuda
