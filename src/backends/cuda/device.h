// Owning wrappers for what the CUDA backend allocates outside the hot path: device memory, the
// library handles of one execution context, and the current device's properties.
#pragma once

#include <memory>

#include "backends/cuda/run_context.h"
#include "tensoracle/status.h"

namespace tensoracle::backends::cuda {

// Device memory freed on destruction (cudaMalloc'd; 256-byte aligned).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static Result<DeviceBuffer> allocate(size_t bytes, const char* what);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// The properties of the current CUDA device (kFailedPrecondition with the reason when none).
Result<DeviceInfo> current_device();

// A cuBLASLt and a cuDNN handle, created together for one execution context (or one build).
class LibraryHandles {
 public:
  static Result<std::unique_ptr<LibraryHandles>> create();
  ~LibraryHandles();
  LibraryHandles(const LibraryHandles&) = delete;
  LibraryHandles& operator=(const LibraryHandles&) = delete;

  // A RunContext for `stream` on `device` with these handles, for steps given `workspace_bytes`.
  RunContext context(cudaStream_t stream, const DeviceInfo* device, size_t workspace_bytes = SIZE_MAX) const {
    return RunContext{stream, cublaslt_, cudnn_, device, workspace_bytes};
  }

 private:
  LibraryHandles() = default;
  cublasLtHandle_t cublaslt_ = nullptr;
  cudnnContext* cudnn_ = nullptr;
};

}  // namespace tensoracle::backends::cuda
