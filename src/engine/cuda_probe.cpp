// The CUDA probe (TENSORACLE_BUILD_CUDA=ON): device 0's properties and the versions of the CUDA
// runtime, the driver, cuBLASLt and cuDNN this process uses.
#include "engine/cuda_probe.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#if defined(TENSORACLE_HAVE_CUDNN)
#include <cudnn.h>
#endif

namespace tensoracle {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

// cuBLASLt: major * 10000 + minor * 100 + patch.
std::string cublaslt_version_text(size_t version) {
  return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
}

// cuDNN 9: major * 10000 + minor * 100 + patch; empty when this build has no cuDNN.
std::string cudnn_version() {
#if defined(TENSORACLE_HAVE_CUDNN)
  const size_t version = cudnnGetVersion();
  return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
#else
  return "";
#endif
}

}  // namespace

CudaProbe probe_cuda() {
  CudaProbe probe;
  int runtime = 0;
  int driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess || cudaDriverGetVersion(&driver) != cudaSuccess) {
    probe.unavailable_reason = "the CUDA runtime cannot report its version";
    return probe;
  }
  if (driver == 0) {
    probe.unavailable_reason = "no CUDA driver is installed";
    return probe;
  }
  int count = 0;
  const cudaError_t count_error = cudaGetDeviceCount(&count);
  if (count_error != cudaSuccess || count == 0) {
    probe.unavailable_reason = count_error != cudaSuccess
                                   ? fmt::format("no CUDA device: {}", cudaGetErrorString(count_error))
                                   : std::string("no CUDA device");
    return probe;
  }
  cudaDeviceProp properties{};
  const cudaError_t error = cudaGetDeviceProperties(&properties, 0);
  if (error != cudaSuccess) {
    probe.unavailable_reason = fmt::format("cannot read the properties of CUDA device 0: {}", cudaGetErrorString(error));
    return probe;
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
  probe.gpu = gpu;

  CudaVersions versions;
  versions.runtime = cuda_version_text(runtime);
  versions.driver = cuda_version_text(driver);
  versions.cublaslt = cublaslt_version_text(cublasLtGetVersion());
  versions.cudnn = cudnn_version();
  probe.cuda = versions;
  return probe;
}

}  // namespace tensoracle
