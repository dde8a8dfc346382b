// The CUDA probe (probe.h).
#include "backends/cuda/probe.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <fmt/format.h>

namespace tensoracle::backends::cuda {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

// cuBLASLt: major * 10000 + minor * 100 + patch.
std::string cublaslt_version_text(size_t version) {
  return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
}

// cuDNN 9: major * 10000 + minor * 100 + patch.
std::string cudnn_version() {
  const size_t version = cudnnGetVersion();
  return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
}

}  // namespace

void probe_cuda(Environment& environment) {
  int runtime = 0;
  int driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess || cudaDriverGetVersion(&driver) != cudaSuccess) {
    environment.cuda_unavailable_reason = "the CUDA runtime cannot report its version";
    return;
  }
  if (driver == 0) {
    environment.cuda_unavailable_reason = "no CUDA driver is installed";
    return;
  }
  int count = 0;
  const cudaError_t count_error = cudaGetDeviceCount(&count);
  if (count_error != cudaSuccess || count == 0) {
    environment.cuda_unavailable_reason = count_error != cudaSuccess
                                                     ? fmt::format("no CUDA device: {}", cudaGetErrorString(count_error))
                                                     : std::string("no CUDA device");
    return;
  }
  cudaDeviceProp properties{};
  const cudaError_t error = cudaGetDeviceProperties(&properties, 0);
  if (error != cudaSuccess) {
    environment.cuda_unavailable_reason = fmt::format("cannot read the properties of CUDA device 0: {}", cudaGetErrorString(error));
    return;
  }
  GpuProperties gpu;
  gpu.name = properties.name;
  gpu.compute_capability_major = properties.major;
  gpu.compute_capability_minor = properties.minor;
  gpu.sm_count = properties.multiProcessorCount;
  gpu.l2_cache_bytes = properties.l2CacheSize;
  gpu.memory_bus_width_bits = properties.memoryBusWidth;
  gpu.shared_memory_per_block_optin_bytes = static_cast<int64_t>(properties.sharedMemPerBlockOptin);
  gpu.shared_memory_per_sm_bytes = static_cast<int64_t>(properties.sharedMemPerMultiprocessor);
  gpu.total_memory_bytes = static_cast<int64_t>(properties.totalGlobalMem);
  gpu.ecc_enabled = properties.ECCEnabled != 0;
  gpu.integrated = properties.integrated != 0;
  environment.gpu = gpu;

  CudaVersions versions;
  versions.runtime = cuda_version_text(runtime);
  versions.driver = cuda_version_text(driver);
  versions.cublaslt = cublaslt_version_text(cublasLtGetVersion());
  versions.cudnn = cudnn_version();
  environment.cuda = versions;
}

}  // namespace tensoracle::backends::cuda
