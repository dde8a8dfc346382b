// Executions of a restored CUDA plan (cuda_execution.h).
#include "backends/cuda/cuda_execution.h"

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/plan_json.h"
#include "backends/cuda/runtime.h"
#include "core/errors.h"
#include "core/lookup.h"

namespace tensoracle::backends::cuda {

namespace {

class CudaExecution : public ExecutionBackend {
 public:
  explicit CudaExecution(std::unique_ptr<Runtime> runtime) : runtime_(std::move(runtime)) {}

  // Shape inference only: the steps are prepared by enqueue, once every input has its shape
  // (backend.h).
  Result<std::map<std::string, Dims>> output_shapes(const std::map<std::string, Dims>& input_shapes) override {
    return runtime_->output_shapes(input_shapes);
  }

  // Bindings are device addresses; `stream` is a cudaStream_t (nullptr: the legacy default
  // stream, which cannot be captured into a CUDA graph).
  Status enqueue(const std::map<std::string, Dims>& input_shapes, const std::map<std::string, void*>& bindings,
                 const std::map<std::string, Dims>&, void* stream) override {
    // Configures the steps for these shapes the first time they are run (no work when they are
    // the prepared ones); a step's configuration error, such as a plugin's configure, is reported here.
    TO_RETURN_IF_ERROR(runtime_->prepare(input_shapes).status());
    return runtime_->enqueue(bindings, static_cast<cudaStream_t>(stream));
  }

  bool last_enqueue_used_graph() const override { return runtime_->last_enqueue_used_graph(); }

  Result<NamedArrays> run_on_host(const std::map<std::string, Dims>& input_shapes, const NamedArrayViews& inputs,
                                  const std::map<std::string, Dims>& output_shapes, const IoTable& io) override {
    std::vector<DeviceBuffer> staging;
    std::map<std::string, void*> bindings;
    NamedArrays outputs;
    for (const IoTensor& t : io.tensors) {
      // Execution::run has checked that every input is given and every output's shape known.
      const ArrayView* input = t.is_input ? lookup(inputs, t.name) : nullptr;
      const Dims* output_shape = t.is_input ? nullptr : lookup(output_shapes, t.name);
      TO_ASSERT(input != nullptr || output_shape != nullptr);
      size_t bytes = 0;
      if (input) {
        bytes = input->byte_size();
      } else {
        TO_ASSIGN_OR_RETURN(int64_t n, output_shape->byte_size(t.dtype));
        bytes = static_cast<size_t>(n);
      }
      TO_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::allocate(std::max<size_t>(bytes, 1), t.name.c_str()));
      if (input && bytes) TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(buffer.data(), input->data, bytes, cudaMemcpyHostToDevice));
      if (output_shape) {
        TO_ASSIGN_OR_RETURN(outputs[t.name], HostArray::zeros(t.dtype, *output_shape));
      }
      bindings[t.name] = buffer.data();
      staging.push_back(std::move(buffer));
    }
    cudaStream_t stream = nullptr;
    TO_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Status ran = enqueue(input_shapes, bindings, output_shapes, stream);
    const cudaError_t synced = cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    TO_RETURN_IF_ERROR(ran);
    TO_RETURN_IF_ERROR(cuda_status(synced, "running the engine"));
    for (auto& [name, array] : outputs)
      if (array.byte_size())
        TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(array.data(), bindings[name], array.byte_size(), cudaMemcpyDeviceToHost));
    return outputs;
  }

  Result<std::vector<LayerTiming>> profile_layers(const std::map<std::string, Dims>& input_shapes,
                                                  const std::map<std::string, void*>& bindings, void* stream,
                                                  int iterations) override {
    TO_RETURN_IF_ERROR(runtime_->prepare(input_shapes).status());
    return runtime_->profile_steps(bindings, static_cast<cudaStream_t>(stream), iterations);
  }

 private:
  std::unique_ptr<Runtime> runtime_;
};

class CudaRestoredPlan : public RestoredPlan {
 public:
  explicit CudaRestoredPlan(std::shared_ptr<const LoadedPlan> plan) : plan_(std::move(plan)) {}
  Result<std::unique_ptr<ExecutionBackend>> create_execution() const override {
    TO_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime, Runtime::create(plan_));
    return std::unique_ptr<ExecutionBackend>(std::make_unique<CudaExecution>(std::move(runtime)));
  }

 private:
  std::shared_ptr<const LoadedPlan> plan_;
};

}  // namespace

Result<std::shared_ptr<const RestoredPlan>> restore_cuda_engine(const EngineFile& file, const CheckedPlan& checked) {
  TO_ASSIGN_OR_RETURN(CudaPlan plan, deserialize_plan(checked, file));
  TO_ASSIGN_OR_RETURN_CONTEXT(std::shared_ptr<const LoadedPlan> loaded, LoadedPlan::load(std::move(plan)),
                              fmt::format("engine '{}'", file.label()));
  return std::shared_ptr<const RestoredPlan>(std::make_shared<CudaRestoredPlan>(std::move(loaded)));
}

}  // namespace tensoracle::backends::cuda
