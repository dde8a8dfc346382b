// The CUDA timed execution: device buffers bound once, a non-blocking stream of its own, CUDA
// events around every sample (CUDA builds only).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "bench/timed_execution.h"
#include "core/errors.h"
#include "core/lookup.h"

namespace tensoracle::bench {

namespace {

Status cuda_status(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return Status::ok();
  return make_error(StatusCode::kCudaError, "{}: {}", what, cudaGetErrorString(error));
}

class CudaTimedExecution : public TimedExecution {
 public:
  static constexpr int kChunk = 1024;

  explicit CudaTimedExecution(Execution execution) : execution_(std::move(execution)) {}
  ~CudaTimedExecution() override {
    if (stream_) cudaStreamSynchronize(stream_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (stream_) cudaStreamDestroy(stream_);
    for (void* p : buffers_) cudaFree(p);
  }

  Status setup(const Engine& engine, const NamedArrayViews& inputs) {
    TO_RETURN_IF_ERROR(cuda_status(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
    for (const std::string& name : engine.input_names()) {
      const ArrayView* found = lookup(inputs, name);
      TO_ASSERT(found != nullptr);  // execution_for_inputs (timed_execution.cpp) found every input
      const ArrayView& host = *found;
      TO_ASSIGN_OR_RETURN(void* device, allocate(host.byte_size(), name));
      TO_RETURN_IF_ERROR(cuda_status(cudaMemcpy(device, host.data, host.byte_size(), cudaMemcpyHostToDevice),
                                     "copying an input to the GPU"));
      TO_RETURN_IF_ERROR(execution_.bind(name, device));
    }
    for (const std::string& name : engine.output_names()) {
      TO_ASSIGN_OR_RETURN(Dims shape, execution_.tensor_shape(name));
      TO_ASSIGN_OR_RETURN(IoTensor io, engine.tensor(name));
      TO_ASSIGN_OR_RETURN(int64_t bytes, shape.byte_size(io.dtype));
      TO_ASSIGN_OR_RETURN(void* device, allocate(static_cast<size_t>(bytes), name));
      TO_RETURN_IF_ERROR(execution_.bind(name, device));
    }
    int device = 0;
    std::array<char, 32> bus_id{};
    TO_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&device), "cudaGetDevice"));
    TO_RETURN_IF_ERROR(
        cuda_status(cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), device), "cudaDeviceGetPCIBusId"));
    pci_bus_id_ = bus_id.data();
    return cuda_status(cudaDeviceSynchronize(), "after uploading the inputs");
  }

  Status warm_up(int enqueues) override {
    for (int i = 0; i < enqueues; ++i) TO_RETURN_IF_ERROR(execution_.enqueue(stream_));
    return cuda_status(cudaStreamSynchronize(stream_), "warm-up enqueues");
  }

  Status time(TimingMode mode, int count, int group, std::vector<double>& samples_ms) override {
    if (mode == TimingMode::kLatency) group = 1;
    // Samples are recorded in chunks with one wait at the end of each, so a long run needs no
    // more than kChunk event pairs (throughput samples stay back to back within a chunk).
    for (int first = 0; first < count; first += kChunk) {
      const int n = std::min(kChunk, count - first);
      TO_RETURN_IF_ERROR(reserve_events(2 * static_cast<size_t>(n)));
      for (int i = 0; i < n; ++i) {
        TO_RETURN_IF_ERROR(cuda_status(cudaEventRecord(events_[2 * i], stream_), "cudaEventRecord"));
        for (int g = 0; g < group; ++g) TO_RETURN_IF_ERROR(execution_.enqueue(stream_));
        TO_RETURN_IF_ERROR(cuda_status(cudaEventRecord(events_[2 * i + 1], stream_), "cudaEventRecord"));
        // Latency: the call is waited for before the next one starts, as one request would be.
        if (mode == TimingMode::kLatency)
          TO_RETURN_IF_ERROR(cuda_status(cudaEventSynchronize(events_[2 * i + 1]), "waiting for an enqueue"));
      }
      TO_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream_), "timed enqueues"));
      for (int i = 0; i < n; ++i) {
        float ms = 0;
        TO_RETURN_IF_ERROR(cuda_status(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]), "cudaEventElapsedTime"));
        samples_ms.push_back(static_cast<double>(ms) / group);
      }
    }
    return Status::ok();
  }

  std::string clock() const override { return "cuda_events"; }
  std::string execution() const override {
    return execution_.last_enqueue_used_graph() ? "cuda_graph_replay" : "cuda_direct";
  }
  Result<std::vector<LayerTiming>> profile_layers(int iterations) override {
    return execution_.profile_layers(stream_, iterations);
  }
  std::string pci_bus_id() const override { return pci_bus_id_; }

 private:
  Result<void*> allocate(size_t bytes, const std::string& name) {
    void* p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, bytes == 0 ? 1 : bytes); e != cudaSuccess)
      return make_error(StatusCode::kCudaError, "cudaMalloc of {} bytes for '{}': {}", bytes, name, cudaGetErrorString(e));
    buffers_.push_back(p);
    return p;
  }
  Status reserve_events(size_t n) {
    while (events_.size() < n) {
      cudaEvent_t e = nullptr;
      TO_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&e), "cudaEventCreate"));
      events_.push_back(e);
    }
    return Status::ok();
  }

  Execution execution_;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;
  std::vector<void*> buffers_;
  std::string pci_bus_id_;
};

}  // namespace

Result<std::unique_ptr<TimedExecution>> make_cuda_timed_execution(Execution execution, const Engine& engine,
                                                                  const NamedArrayViews& inputs) {
  auto timed = std::make_unique<CudaTimedExecution>(std::move(execution));
  TO_RETURN_IF_ERROR(timed->setup(engine, inputs));
  return std::unique_ptr<TimedExecution>(std::move(timed));
}

}  // namespace tensoracle::bench
