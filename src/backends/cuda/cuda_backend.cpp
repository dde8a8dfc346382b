#include "backends/cuda/cuda_backend.h"

#include <fmt/format.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/planner.h"
#include "backends/cuda/runtime.h"
#include "core/errors.h"

namespace tensoracle::backends {

namespace {

using cuda::tactic_families;

class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }

  Status supports(const Network& network, size_t index) const override {
    const Node& node = network.node(index);
    if (node.kind == OpKind::kConstant) return Status::ok();
    if (tactic_families().for_kind(node.kind).empty())
      return unsupported("layer '{}': the cuda backend has no implementation of {}", node.name, op_kind_name(node.kind));
    return Status::ok();
  }

  // Steps, not single nodes, are the CUDA backend's unit (a layer may be fused into another's
  // tactic), so it offers no per-node Tactic objects; the planner works with families directly.
  std::vector<std::unique_ptr<Tactic>> tactics(const Network&, size_t) const override { return {}; }

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
  std::map<std::string, ShapeRange> profile;
  std::map<std::string, Dims> shapes;
  for (Tensor t : network.inputs()) {
    const TensorInfo& info = network.tensor(t);
    auto it = inputs.find(info.name);
    if (it == inputs.end()) return invalid_argument("cuda backend: input '{}' ({}) was not given", info.name, info.desc.to_string());
    if (it->second.dtype != info.desc.dtype || it->second.shape.rank() != info.desc.shape.rank())
      return invalid_argument("cuda backend: input '{}' is {}{} but the network declares {}", info.name,
                              data_type_name(it->second.dtype), it->second.shape.to_string(), info.desc.to_string());
    profile[info.name] = ShapeRange::fixed(it->second.shape);
    shapes[info.name] = it->second.shape;
  }
  cuda::PlanOptions options;
  options.optimization_level = 0;
  TO_ASSIGN_OR_RETURN(cuda::CudaPlan plan, cuda::make_cuda_plan(network, {profile}, options, nullptr));
  TO_ASSIGN_OR_RETURN(std::shared_ptr<const cuda::LoadedPlan> loaded, cuda::LoadedPlan::load(std::move(plan)));
  TO_ASSIGN_OR_RETURN(std::unique_ptr<cuda::Runtime> runtime, cuda::Runtime::create(loaded));
  TO_ASSIGN_OR_RETURN(auto output_shapes, runtime->prepare(shapes));

  std::map<std::string, cuda::DeviceBuffer> buffers;
  std::map<std::string, void*> bindings;
  for (const auto& [name, shape] : shapes) {
    TO_ASSIGN_OR_RETURN(buffers[name], upload(inputs.at(name), name));
    bindings[name] = buffers[name].data();
  }
  NamedArrays result;
  for (Tensor t : network.outputs()) {
    const std::string& name = network.tensor(t).name;
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(network.tensor(t).desc.dtype, output_shapes.at(name)));
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

Result<std::unique_ptr<Backend>> make_cuda_backend() {
  TO_RETURN_IF_ERROR(cuda::current_device().status());
  return std::unique_ptr<Backend>(std::make_unique<CudaBackend>());
}

}  // namespace tensoracle::backends
