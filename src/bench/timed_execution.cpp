// The host timed execution (cpu engines): host buffers, std::chrono::steady_clock around calls
// that run synchronously.
#include "bench/timed_execution.h"

#include <chrono>

#include "core/errors.h"
#include "core/lookup.h"

namespace tensoracle::bench {

namespace {

class HostTimedExecution : public TimedExecution {
 public:
  HostTimedExecution(Execution execution, NamedArrays inputs, NamedArrays outputs)
      : execution_(std::move(execution)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

  Status bind_all() {
    for (auto* arrays : {&inputs_, &outputs_})
      for (auto& [name, array] : *arrays) TO_RETURN_IF_ERROR(execution_.bind(name, array.data()));
    return Status::ok();
  }

  Status warm_up(int enqueues) override {
    for (int i = 0; i < enqueues; ++i) TO_RETURN_IF_ERROR(execution_.enqueue());
    return Status::ok();
  }

  Status time(TimingMode mode, int count, int group, std::vector<double>& samples_ms) override {
    if (mode == TimingMode::kLatency) group = 1;
    for (int i = 0; i < count; ++i) {
      const auto start = std::chrono::steady_clock::now();
      for (int g = 0; g < group; ++g) TO_RETURN_IF_ERROR(execution_.enqueue());
      const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
      samples_ms.push_back(elapsed.count() / group);
    }
    return Status::ok();
  }

  std::string clock() const override { return "steady_clock"; }
  std::string execution() const override { return "host"; }
  Result<std::vector<LayerTiming>> profile_layers(int iterations) override {
    return execution_.profile_layers(nullptr, iterations);
  }
  std::string pci_bus_id() const override { return ""; }

 private:
  Execution execution_;
  NamedArrays inputs_;
  NamedArrays outputs_;
};

}  // namespace

Result<Execution> execution_for_inputs(const Engine& engine, const NamedArrayViews& inputs, size_t profile) {
  TO_ASSIGN_OR_RETURN(Execution execution, engine.create_execution(profile));
  std::map<std::string, Dims> shapes;
  for (const std::string& name : engine.input_names()) {
    auto it = inputs.find(name);
    if (it == inputs.end()) return invalid_argument("no input array for engine input '{}'", name);
    TO_ASSIGN_OR_RETURN(IoTensor io, engine.tensor(name));
    if (it->second.dtype != io.dtype)
      return invalid_argument("input '{}' is {}, the engine takes {}", name, data_type_name(it->second.dtype),
                              data_type_name(io.dtype));
    shapes[name] = it->second.shape;
  }
  TO_RETURN_IF_ERROR(execution.set_input_shapes(shapes));
  return execution;
}

Result<std::unique_ptr<TimedExecution>> make_timed_execution(const Engine& engine, const NamedArrayViews& inputs,
                                                             size_t profile) {
  TO_ASSIGN_OR_RETURN(Execution execution, execution_for_inputs(engine, inputs, profile));
  // An engine built for a GPU records it (a host backend's environment has none by design): its
  // buffers are device memory.
  if (engine.file().environment().gpu.has_value()) return make_cuda_timed_execution(std::move(execution), engine, inputs);
  NamedArrays in, out;
  for (const std::string& name : engine.input_names()) {
    const ArrayView* view = lookup(inputs, name);
    TO_ASSERT(view != nullptr);  // execution_for_inputs found every input
    TO_ASSIGN_OR_RETURN(in[name], HostArray::copy_of(*view));
  }
  for (const std::string& name : engine.output_names()) {
    TO_ASSIGN_OR_RETURN(Dims shape, execution.tensor_shape(name));
    TO_ASSIGN_OR_RETURN(IoTensor io, engine.tensor(name));
    TO_ASSIGN_OR_RETURN(out[name], HostArray::zeros(io.dtype, shape));
  }
  auto timed = std::make_unique<HostTimedExecution>(std::move(execution), std::move(in), std::move(out));
  TO_RETURN_IF_ERROR(timed->bind_all());
  return std::unique_ptr<TimedExecution>(std::move(timed));
}

}  // namespace tensoracle::bench
