// Running a CUDA plan. A LoadedPlan (one per engine, shared by its execution contexts) holds the
// plan and the constants uploaded to the device once. A Runtime (one per execution context, used
// by one thread at a time) holds the library handles, the tactics, the activation arena and the
// CUDA graph.
//
// output_shapes(input shapes) is shape inference only: the execution's input shapes are set one
// at a time, and a combination the caller is passing through must not reach a tactic (a plugin's
// configure may refuse it). prepare(input shapes), called by the execution's enqueue (and
// run_on_host, profile_layers) once the shapes are all set, does everything that may allocate or
// synchronize: shape inference, step instances, tactic initialization for new shapes, nothing
// when the shapes are the ones prepared. enqueue() then only launches: every step's
// run() on the caller's stream, on the caller's buffers. The first enqueue after a shape or
// binding change captures the steps into a CUDA graph (on a stream that allows capture, i.e. not
// the legacy default stream); later enqueues with the same shapes, bindings and stream replay it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/device.h"
#include "backends/cuda/planner.h"
#include "backends/cuda/step_schedule.h"
#include "tensoracle/layer_timing.h"

namespace tensoracle::backends::cuda {

class LoadedPlan {
 public:
  static Result<std::shared_ptr<const LoadedPlan>> load(CudaPlan plan);
  const CudaPlan& plan() const { return plan_; }
  const DeviceInfo& device() const { return device_; }
  // The device address of constant tensor `t` (nullptr if `t` is not a constant).
  void* constant(Tensor t) const;

 private:
  CudaPlan plan_;
  DeviceInfo device_;
  DeviceBuffer constants_;
  std::vector<int64_t> constant_offsets_;  // per tensor id, -1 when not a constant
};

class Runtime {
 public:
  static Result<std::unique_ptr<Runtime>> create(std::shared_ptr<const LoadedPlan> plan);
  ~Runtime();

  // Output shapes by name for these input shapes, and every planned tensor fits its planned
  // bytes; prepares nothing.
  Result<std::map<std::string, Dims>> output_shapes(const std::map<std::string, Dims>& input_shapes) const;
  // output_shapes, and prepares the steps for these shapes (initializes their tactics).
  Result<std::map<std::string, Dims>> prepare(const std::map<std::string, Dims>& input_shapes);
  // Runs the prepared plan. `bindings` maps every input and output name to a device address.
  Status enqueue(const std::map<std::string, void*>& bindings, cudaStream_t stream);
  // Median time of each step over `iterations` runs (outside any graph), for profiles.
  Result<std::vector<LayerTiming>> profile_steps(const std::map<std::string, void*>& bindings, cudaStream_t stream,
                                                 int iterations);
  // Whether the last enqueue replayed or captured a CUDA graph.
  bool last_enqueue_used_graph() const { return last_used_graph_; }

 private:
  explicit Runtime(std::shared_ptr<const LoadedPlan> plan) : loaded_(std::move(plan)) {}
  // Every tensor's description for these input shapes, each planned tensor within its bytes.
  Result<std::vector<TensorDesc>> infer(const std::map<std::string, Dims>& input_shapes) const;
  Status bind(const std::map<std::string, void*>& bindings);
  Status run_steps(cudaStream_t stream);
  void drop_graph();

  // Where an engine input or output appears in the step buffers.
  struct Patch {
    size_t step;
    int list;  // 0 inputs, 1 extra_inputs, 2 outputs
    size_t index;
    std::string name;
  };
  struct OutputCopy {  // an output that no step writes (an input or a constant marked as output)
    std::string output;
    std::string input;  // empty: from `constant`
    const void* constant = nullptr;
    size_t bytes = 0;
  };

  // The library handles of the stream a step runs on (each stream has its own).
  const LibraryHandles& handles_of(size_t step) const;

  std::shared_ptr<const LoadedPlan> loaded_;
  std::unique_ptr<LibraryHandles> handles_;
  // The auxiliary stream, its handles and the events ordering the two streams (step_schedule.h);
  // all empty when every step runs on the caller's stream.
  StepSchedule schedule_;
  std::unique_ptr<LibraryHandles> aux_handles_;
  cudaStream_t aux_stream_ = nullptr;
  cudaEvent_t start_event_ = nullptr;       // main, at the start of a run
  cudaEvent_t aux_end_event_ = nullptr;     // auxiliary, at the end of a run
  std::vector<cudaEvent_t> fork_events_;  // per step: main, after a step auxiliary steps wait for
  std::vector<cudaEvent_t> done_events_;  // per step: auxiliary, after each auxiliary step
  DeviceBuffer arena_;
  std::vector<std::unique_ptr<CudaTactic>> tactics_;
  std::map<std::string, Dims> prepared_shapes_;
  std::vector<TensorDesc> desc_;
  std::vector<StepInstance> instances_;
  std::vector<StepBuffers> buffers_;
  std::vector<Patch> patches_;
  std::vector<OutputCopy> copies_;
  std::vector<void*> bound_;  // per patch, the address bound at the last enqueue
  // CUDA graph of the prepared shapes and the bound addresses.
  cudaGraphExec_t graph_ = nullptr;
  cudaStream_t graph_stream_ = nullptr;
  bool graph_failed_ = false;
  bool last_used_graph_ = false;
};

}  // namespace tensoracle::backends::cuda
