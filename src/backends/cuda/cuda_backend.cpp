// The CUDA backend (cuda_backend.h): the Backend interface over the planner, the plan's JSON,
// the restored plan and the probe; execute() for the op harness.
#include "backends/cuda/cuda_backend.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_execution.h"
#include "backends/cuda/plan_json.h"
#include "backends/cuda/planner.h"
#include "backends/cuda/probe.h"
#include "backends/cuda/runtime.h"
#include "backends/plan_network.h"
#include "core/errors.h"
#include "core/lookup.h"

namespace tensoracle::backends {

namespace {

using cuda::tactic_families;

class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }

  Status usable() const override { return cuda::current_device().status(); }

  Status supports(const Network& network, size_t index) const override {
    const Node& node = network.node(index);
    if (node.kind == OpKind::kConstant) return Status::ok();
    if (tactic_families().for_kind(node.kind).empty())
      return unsupported("layer '{}': the cuda backend has no implementation of {}", node.name, op_kind_name(node.kind));
    return Status::ok();
  }

  Result<BackendPlan> plan(const PlanRequest& request) const override {
    cuda::PlanOptions options;
    options.optimization_level = request.settings.optimization_level;
    options.timing_iterations = request.settings.timing_iterations;
    options.workspace_limit_bytes = request.settings.workspace_limit_bytes;
    options.auxiliary_streams = request.settings.auxiliary_streams;
    options.fp8_fast_accumulation = request.settings.fp8_fast_accumulation;
    if (request.tactic_record != nullptr) {
      TO_ASSIGN_OR_RETURN(options.replay, cuda::recorded_choices(request.tactic_record->plan().as_string_view(),
                                                                 request.tactic_record->label()));
    }
    cuda::StepProgressFn on_step;
    if (request.progress) on_step = [&](size_t, size_t, const std::string& message) { request.progress(message); };
    TO_ASSIGN_OR_RETURN(cuda::CudaPlan plan, cuda::make_cuda_plan(request.network, request.profiles, options, on_step));
    cuda::SerializedPlan serialized = cuda::serialize_plan(plan);
    return BackendPlan{std::move(serialized.json), std::move(serialized.blobs)};
  }

  Status check_plan(const EngineFile& file, const CheckedPlan& plan) const override {
    return cuda::deserialize_plan(plan, file).status();
  }

  Result<std::shared_ptr<const RestoredPlan>> restore(const EngineFile& file, const CheckedPlan& plan) const override {
    return cuda::restore_cuda_engine(file, plan);
  }

  void probe(Environment& environment) const override { cuda::probe_cuda(environment); }

  Result<NamedArrays> execute(const Network& network, const NamedArrayViews& inputs) override;
};

// Device memory for one host array, copied in or out.
Result<cuda::DeviceBuffer> upload(const ArrayView& view, const std::string& name) {
  TO_ASSIGN_OR_RETURN(cuda::DeviceBuffer buffer, cuda::DeviceBuffer::allocate(std::max<size_t>(view.byte_size(), 1), name.c_str()));
  if (view.byte_size() > 0) TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(buffer.data(), view.data, view.byte_size(), cudaMemcpyHostToDevice));
  return buffer;
}

Result<NamedArrays> CudaBackend::execute(const Network& network, const NamedArrayViews& inputs) {
  TO_RETURN_IF_ERROR(network.status().with_context("cuda backend: the network has a definition error"));
  TO_ASSIGN_OR_RETURN(const auto shapes, given_input_shapes(network, inputs, "cuda backend"));
  std::map<std::string, ShapeRange> profile;
  for (const auto& [name, shape] : shapes) profile[name] = ShapeRange::fixed(shape);
  cuda::PlanOptions options;
  options.optimization_level = 0;
  TO_ASSIGN_OR_RETURN(cuda::CudaPlan plan, cuda::make_cuda_plan(network, {profile}, options, nullptr));
  TO_ASSIGN_OR_RETURN(std::shared_ptr<const cuda::LoadedPlan> loaded, cuda::LoadedPlan::load(std::move(plan)));
  TO_ASSIGN_OR_RETURN(std::unique_ptr<cuda::Runtime> runtime, cuda::Runtime::create(loaded));
  TO_ASSIGN_OR_RETURN(auto output_shapes, runtime->prepare(shapes));

  std::map<std::string, cuda::DeviceBuffer> buffers;
  std::map<std::string, void*> bindings;
  for (const auto& [name, shape] : shapes) {
    const ArrayView* view = lookup(inputs, name);
    TO_ASSERT(view != nullptr);  // shapes holds the given inputs' names
    TO_ASSIGN_OR_RETURN(buffers[name], upload(*view, name));
    bindings[name] = buffers[name].data();
  }
  NamedArrays result;
  for (Tensor t : network.outputs()) {
    const std::string& name = network.tensor(t).name;
    const Dims* shape = lookup(output_shapes, name);
    TO_ASSERT(shape != nullptr);  // prepare gives every output's shape
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(network.tensor(t).desc.dtype, *shape));
    // Poison: a NaN-like byte pattern in every element, so an element no kernel writes shows.
    std::memset(array.data(), 0xFF, array.byte_size());
    TO_ASSIGN_OR_RETURN(buffers[name], upload(array.view(), name));
    bindings[name] = buffers[name].data();
    result[name] = std::move(array);
  }
  cudaStream_t stream = nullptr;
  TO_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Status ran = runtime->enqueue(bindings, stream);
  const cudaError_t synced = cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  TO_RETURN_IF_ERROR(ran);
  TO_RETURN_IF_ERROR(cuda::cuda_status(synced, "running the network"));
  for (auto& [name, array] : result)
    if (array.byte_size() > 0)
      TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(array.data(), buffers[name].data(), array.byte_size(), cudaMemcpyDeviceToHost));
  return result;
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace tensoracle::backends
