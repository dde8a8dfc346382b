// Executions of a restored CPU plan (cpu_execution.h).
#include "backends/cpu/cpu_execution.h"

#include <cstring>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_plan.h"
#include "backends/plan_network.h"
#include "core/errors.h"

namespace tensoracle::backends::cpu {

namespace {

class CpuExecution : public ExecutionBackend {
 public:
  explicit CpuExecution(std::shared_ptr<const Network> network)
      : network_(std::move(network)), backend_(make_cpu_backend()) {}

  Result<std::map<std::string, Dims>> output_shapes(const std::map<std::string, Dims>& input_shapes) override {
    return infer_output_shapes(*network_, input_shapes);
  }

  Status enqueue(const std::map<std::string, Dims>& input_shapes, const std::map<std::string, void*>& bindings,
                 const std::map<std::string, Dims>& output_shapes, void*) override {
    NamedArrayViews inputs;
    for (Tensor t : network_->inputs()) {
      const TensorInfo& info = network_->tensor(t);
      inputs[info.name] = ArrayView{info.desc.dtype, input_shapes.at(info.name), bindings.at(info.name)};
    }
    TO_ASSIGN_OR_RETURN(NamedArrays outputs, backend_->execute(*network_, inputs));
    for (const auto& [name, array] : outputs) {
      auto expected = output_shapes.find(name);
      if (expected == output_shapes.end() || expected->second != array.shape())
        return make_error(StatusCode::kInternal, "cpu execution: output '{}' came out as {}, shape inference said {}", name,
                              array.shape().to_string(),
                              expected == output_shapes.end() ? std::string("nothing") : expected->second.to_string());
      std::memcpy(bindings.at(name), array.data(), array.byte_size());
    }
    return Status::ok();
  }

  Result<NamedArrays> run_on_host(const std::map<std::string, Dims>& input_shapes, const NamedArrayViews& inputs,
                                  const std::map<std::string, Dims>& output_shapes, const IoTable& io) override {
    NamedArrays outputs;
    std::map<std::string, void*> bindings;
    for (const auto& [name, view] : inputs) bindings[name] = const_cast<void*>(view.data);
    for (const IoTensor& t : io.tensors) {
      if (t.is_input) continue;
      TO_ASSIGN_OR_RETURN(outputs[t.name], HostArray::zeros(t.dtype, output_shapes.at(t.name)));
      bindings[t.name] = outputs[t.name].data();
    }
    TO_RETURN_IF_ERROR(enqueue(input_shapes, bindings, output_shapes, nullptr));
    return outputs;
  }

 private:
  std::shared_ptr<const Network> network_;
  std::unique_ptr<Backend> backend_;
};

class CpuRestoredPlan : public RestoredPlan {
 public:
  explicit CpuRestoredPlan(std::shared_ptr<const Network> network) : network_(std::move(network)) {}
  Result<std::unique_ptr<ExecutionBackend>> create_execution() const override {
    return std::unique_ptr<ExecutionBackend>(std::make_unique<CpuExecution>(network_));
  }

 private:
  std::shared_ptr<const Network> network_;
};

}  // namespace

Result<std::shared_ptr<const RestoredPlan>> restore_cpu_engine(const EngineFile& file) {
  auto network = restore_cpu_plan(file.plan().as_string_view(), engine_blobs(file));
  if (!network.is_ok()) return network.status().with_context(fmt::format("engine '{}'", file.label()));
  auto shared = std::make_shared<const Network>(std::move(network).value());
  return std::shared_ptr<const RestoredPlan>(std::make_shared<CpuRestoredPlan>(std::move(shared)));
}

}  // namespace tensoracle::backends::cpu
