// Shared by the GPU model tests: build an engine on the cuda backend through the public API, run
// it on caller-owned device buffers from host arrays, and compare against a PyTorch reference
// with a model's limits.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "gpu/gpu_testing.h"
#include "tensoracle/compare.h"
#include "tensoracle/engine.h"

namespace tensoracle::testing {

using backends::cuda::cuda_status;

// One device buffer per tensor, at least one byte so that every binding has an address.
inline Result<DeviceBuffer> device_buffer_for(size_t bytes, const std::string& what) {
  return DeviceBuffer::allocate(std::max<size_t>(bytes, 1), what.c_str());
}

// Builds `build` for the cuda backend (serialized, then deserialized as an application would,
// with the build's plugins).
inline Result<Engine> build_cuda_engine(EngineBuild build) {
  build.backend = "cuda";
  build.quiet = true;
  TO_ASSIGN_OR_RETURN(std::string bytes, build_serialized_engine(build));
  return Engine::deserialize(bytes.data(), bytes.size(), build.name + ".engine", build.plugins);
}

// Runs `engine` once in optimization profile `profile` on device copies of `inputs` (each input's
// shape set from its array) and returns every output copied back. Outputs are filled with 0xFF bytes first (NaN for floats), so
// an element the engine never wrote shows up as non-finite.
inline Result<NamedArrays> run_on_device(const Engine& engine, const NamedArrayViews& inputs, size_t profile = 0) {
  TO_ASSIGN_OR_RETURN(Execution exec, engine.create_execution(profile));
  std::vector<DeviceBuffer> buffers;
  for (const std::string& name : engine.input_names()) {
    auto it = inputs.find(name);
    if (it == inputs.end()) return Status(StatusCode::kNotFound, "no host array for engine input '" + name + "'");
    TO_RETURN_IF_ERROR(exec.set_input_shape(name, it->second.shape));
    TO_ASSIGN_OR_RETURN(DeviceBuffer buffer, device_buffer_for(it->second.byte_size(), name));
    TO_RETURN_IF_ERROR(cuda_status(cudaMemcpy(buffer.data(), it->second.data, it->second.byte_size(), cudaMemcpyHostToDevice),
                                   ("copy " + name).c_str()));
    TO_RETURN_IF_ERROR(exec.bind(name, buffer.data()));
    buffers.push_back(std::move(buffer));
  }
  NamedArrays outputs;
  std::vector<std::pair<std::string, void*>> output_buffers;
  for (const std::string& name : engine.output_names()) {
    TO_ASSIGN_OR_RETURN(Dims shape, exec.tensor_shape(name));
    TO_ASSIGN_OR_RETURN(IoTensor io, engine.tensor(name));
    TO_ASSIGN_OR_RETURN(HostArray host, HostArray::zeros(io.dtype, shape));
    TO_ASSIGN_OR_RETURN(DeviceBuffer buffer, device_buffer_for(host.byte_size(), name));
    TO_RETURN_IF_ERROR(cuda_status(cudaMemset(buffer.data(), 0xFF, host.byte_size()), ("poison " + name).c_str()));
    TO_RETURN_IF_ERROR(exec.bind(name, buffer.data()));
    output_buffers.emplace_back(name, buffer.data());
    buffers.push_back(std::move(buffer));
    outputs.emplace(name, std::move(host));
  }
  cudaStream_t stream = nullptr;
  TO_RETURN_IF_ERROR(cuda_status(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  Status run = exec.enqueue(stream);
  const cudaError_t synced = cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  TO_RETURN_IF_ERROR(run);
  TO_RETURN_IF_ERROR(cuda_status(synced, "cudaStreamSynchronize after enqueue"));
  for (const auto& [name, device] : output_buffers) {
    HostArray& host = outputs.at(name);
    TO_RETURN_IF_ERROR(
        cuda_status(cudaMemcpy(host.data(), device, host.byte_size(), cudaMemcpyDeviceToHost), ("copy back " + name).c_str()));
  }
  return outputs;
}

}  // namespace tensoracle::testing
