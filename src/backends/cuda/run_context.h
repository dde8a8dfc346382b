// What a tactic gets besides its buffers: the stream to launch on, the library handles of the
// execution that runs it, and the device's properties. One RunContext per execution context
// (handles are not shared between threads); the stream is the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cublasLt.h>
#include <cuda_runtime_api.h>

struct cudnnContext;  // cudnnHandle_t without including cudnn.h everywhere

namespace tensoracle::backends::cuda {

struct DeviceInfo {
  int device = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t l2_bytes = 0;
  size_t shared_memory_per_block_optin = 0;
  int compute_capability() const { return cc_major * 10 + cc_minor; }
};

struct RunContext {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  cudnnContext* cudnn = nullptr;
  const DeviceInfo* device = nullptr;
  // The workspace the step's run() will get. initialize() keeps its configuration within it: a
  // configuration chosen at other shapes (a recorded or timed one) that needs more at these
  // shapes gives way to one that fits, so a shape inside a profile never fails for workspace.
  size_t workspace_bytes = SIZE_MAX;
};

}  // namespace tensoracle::backends::cuda
