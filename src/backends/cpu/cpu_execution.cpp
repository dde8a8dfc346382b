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
    // Execution has bound every tensor of the I/O table and set every input's shape; the engine
    // layer has checked that the I/O table names the network's inputs and outputs with their types.
    NamedArrayViews inputs;
    for (Tensor t : network_->inputs()) {
      const TensorInfo& info = network_->tensor(t);
      const auto shape = input_shapes.find(info.name);
      const auto binding = bindings.find(info.name);
      TO_ASSERT(shape != input_shapes.end() && binding != bindings.end());
      inputs[info.name] = ArrayView{info.desc.dtype, shape->second, binding->second};
    }
    TO_ASSIGN_OR_RETURN(NamedArrays outputs, backend_->execute(*network_, inputs));
    for (Tensor t : network_->outputs()) {
      const TensorInfo& info = network_->tensor(t);
      const auto array = outputs.find(info.name);
      const auto expected = output_shapes.find(info.name);
      const auto binding = bindings.find(info.name);
      TO_ASSERT(array != outputs.end() && binding != bindings.end() && array->second.dtype() == info.desc.dtype);
      if (expected == output_shapes.end() || expected->second != array->second.shape())
        return make_error(StatusCode::kInternal, "cpu execution: output '{}' came out as {}, shape inference said {}",
                          info.name, array->second.shape().to_string(),
                          expected == output_shapes.end() ? std::string("nothing") : expected->second.to_string());
      std::memcpy(binding->second, array->second.data(), array->second.byte_size());
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
      const auto shape = output_shapes.find(t.name);
      TO_ASSERT(shape != output_shapes.end());
      TO_ASSIGN_OR_RETURN(outputs[t.name], HostArray::zeros(t.dtype, shape->second));
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

Result<std::shared_ptr<const RestoredPlan>> restore_cpu_engine(const EngineFile& file, const CheckedPlan& plan) {
  TO_RETURN_IF_ERROR(check_cpu_plan(plan, fmt::format("engine '{}', plan", file.label())));
  return std::shared_ptr<const RestoredPlan>(std::make_shared<CpuRestoredPlan>(plan.network));
}

}  // namespace tensoracle::backends::cpu
