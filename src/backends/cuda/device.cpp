#include "backends/cuda/device.h"

#include <utility>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn_check.h"

namespace tensoracle::backends::cuda {

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, const char* what) {
  DeviceBuffer buffer;
  if (bytes == 0) return buffer;
  const cudaError_t error = cudaMalloc(&buffer.data_, bytes);
  if (error != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error state of a failed allocation
    return make_error(StatusCode::kCudaError, "cannot allocate {} bytes of device memory for {}: {}", bytes, what,
                      cudaGetErrorString(error));
  }
  buffer.size_ = bytes;
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}

Result<DeviceInfo> current_device() {
  DeviceInfo info;
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0)
    return make_error(StatusCode::kFailedPrecondition, "the cuda backend needs a CUDA GPU: {}",
                      error != cudaSuccess ? cudaGetErrorString(error) : "no device found");
  TO_CUDA_RETURN_IF_ERROR(cudaGetDevice(&info.device));
  cudaDeviceProp p{};
  TO_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, info.device));
  info.cc_major = p.major;
  info.cc_minor = p.minor;
  info.sm_count = p.multiProcessorCount;
  info.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  info.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
  return info;
}

Result<std::unique_ptr<LibraryHandles>> LibraryHandles::create() {
  std::unique_ptr<LibraryHandles> handles(new LibraryHandles());
  TO_CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&handles->cublaslt_));
  TO_CUDNN_RETURN_IF_ERROR(cudnnCreate(&handles->cudnn_));
  return handles;
}

LibraryHandles::~LibraryHandles() {
  if (cudnn_) cudnnDestroy(cudnn_);
  if (cublaslt_) cublasLtDestroy(cublaslt_);
}

}  // namespace tensoracle::backends::cuda
