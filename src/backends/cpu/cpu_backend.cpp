// The CPU backend (cpu_backend.h): the Backend interface over the kernels (kernel_table.cpp),
// the engine plan (cpu_plan.h) and the restored plan (cpu_execution.h), and the executor, which
// converts inputs to fp64, runs the nodes that reach an output in definition order with the
// shapes inference gives for the concrete inputs, rounds each output to its type, frees
// intermediates after their last use and converts the outputs back.
#include "backends/cpu/cpu_backend.h"

#include <cmath>
#include <limits>
#include <map>

#include "backends/cpu/cpu_execution.h"
#include "backends/cpu/cpu_plan.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/plugin_kernel.h"
#include "backends/plan_network.h"
#include "core/lookup.h"
#include "graph/liveness.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::backends {

namespace cpu {

void round_to_type(DataType type, double* data, int64_t count) {
  auto each = [&](auto fn) {
    for (int64_t i = 0; i < count; ++i) data[i] = fn(data[i]);
  };
  auto saturate = [](double v, double lo, double hi) {
    if (std::isnan(v)) return 0.0;
    return std::trunc(std::min(hi, std::max(lo, v)));
  };
  switch (type) {
    case DataType::kFloat64: return;
    case DataType::kFloat32: return each([](double v) { return static_cast<double>(static_cast<float>(v)); });
    case DataType::kFloat16: return each([](double v) { return static_cast<double>(fp16_to_float(float_to_fp16(static_cast<float>(v)))); });
    case DataType::kBFloat16: return each([](double v) { return static_cast<double>(bf16_to_float(float_to_bf16(static_cast<float>(v)))); });
    case DataType::kFloat8E4M3: return each([](double v) { return static_cast<double>(fp8e4m3_to_float(float_to_fp8e4m3(static_cast<float>(v)))); });
    case DataType::kFloat8E5M2: return each([](double v) { return static_cast<double>(fp8e5m2_to_float(float_to_fp8e5m2(static_cast<float>(v)))); });
    case DataType::kBool: return each([](double v) { return v != 0.0 ? 1.0 : 0.0; });
    case DataType::kInt8: return each([&](double v) { return saturate(v, -128, 127); });
    case DataType::kUInt8: return each([&](double v) { return saturate(v, 0, 255); });
    case DataType::kInt16: return each([&](double v) { return saturate(v, -32768, 32767); });
    case DataType::kUInt16: return each([&](double v) { return saturate(v, 0, 65535); });
    case DataType::kInt32: return each([&](double v) { return saturate(v, -2147483648.0, 2147483647.0); });
    case DataType::kUInt32: return each([&](double v) { return saturate(v, 0, 4294967295.0); });
    case DataType::kInt64: return each([&](double v) { return saturate(v, -9223372036854775808.0, 9223372036854774784.0); });
    case DataType::kUInt64: return each([&](double v) { return saturate(v, 0, 18446744073709549568.0); });
  }
}

}  // namespace cpu

namespace {

using Buffer = std::shared_ptr<std::vector<double>>;

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }

  Status usable() const override { return Status::ok(); }

  Status supports(const Network& network, size_t index) const override {
    const Node& node = network.node(index);
    if (node.kind == OpKind::kConstant) return Status::ok();
    if (node.kind == OpKind::kPlugin) return cpu::supports_plugin_layer(network, node);
    if (!cpu::find_kernel(node.kind))
      return unsupported("layer '{}': the cpu backend has no kernel for {}", node.name, op_kind_name(node.kind));
    return Status::ok();
  }

  Result<BackendPlan> plan(const PlanRequest& request) const override {
    if (request.profiles.empty()) return invalid_argument("cpu backend: no optimization profile to plan for");
    // The reference plan is the network itself: one tactic per layer, nothing to time or replay.
    std::map<std::string, Dims> opt;
    for (const auto& [input, range] : request.profiles.front()) opt[input] = range.opt;
    return cpu::make_cpu_plan(request.network, opt, request.progress);
  }

  Status check_plan(const EngineFile& file, const CheckedPlan& plan) const override {
    return cpu::check_cpu_plan(plan, fmt::format("engine '{}', plan", file.label()));
  }

  Result<std::shared_ptr<const RestoredPlan>> restore(const EngineFile& file, const CheckedPlan& plan) const override {
    return cpu::restore_cpu_engine(file, plan);
  }

  void probe(Environment& environment) const override {
    environment.cuda_unavailable_reason = "the cpu backend does not use CUDA";
  }

  Result<NamedArrays> execute(const Network& network, const NamedArrayViews& inputs) override;

 private:
  Result<Buffer> constant_buffer(const Node& node);
  std::map<std::shared_ptr<const ConstantData>, Buffer> constants_;  // converted once per backend
};

Result<Buffer> CpuBackend::constant_buffer(const Node& node) {
  auto it = constants_.find(node.constant);
  if (it != constants_.end()) return it->second;
  const ArrayView& view = node.constant->view;
  auto buffer = std::make_shared<std::vector<double>>(static_cast<size_t>(view.element_count()));
  convert_elements(view.dtype, view.data, DataType::kFloat64, buffer->data(), buffer->size());
  constants_[node.constant] = buffer;
  return buffer;
}

Result<NamedArrays> CpuBackend::execute(const Network& network, const NamedArrayViews& inputs) {
  TO_RETURN_IF_ERROR(network.status().with_context("cpu backend: the network has a definition error"));
  TO_ASSIGN_OR_RETURN(const auto shapes, given_input_shapes(network, inputs, "cpu backend"));
  // Concrete shapes of every live tensor for these inputs, and when each is read for the last time.
  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> desc, infer_tensor_descs(network, shapes));
  const std::vector<bool> live = graph::live_nodes(network);
  const std::vector<size_t> last_reader = graph::last_readers(network, live);

  std::vector<Buffer> value(network.num_tensors());
  for (Tensor t : network.inputs()) {
    const ArrayView* found = lookup(inputs, network.tensor(t).name);
    TO_ASSERT(found != nullptr);  // given_input_shapes found every input
    const ArrayView& view = *found;
    auto buffer = std::make_shared<std::vector<double>>(static_cast<size_t>(view.element_count()));
    convert_elements(view.dtype, view.data, DataType::kFloat64, buffer->data(), buffer->size());
    value[t.id] = std::move(buffer);
  }
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    if (!live[i]) continue;
    const Node& node = network.node(i);
    if (node.kind == OpKind::kConstant) {
      TO_ASSIGN_OR_RETURN(value[node.outputs[0].id], constant_buffer(node));
      continue;
    }
    TO_RETURN_IF_ERROR(supports(network, i));
    NodeInstance instance{node, {}, {}};
    std::vector<const double*> in_ptrs;
    for (Tensor t : node.inputs) {
      instance.inputs.push_back(t.valid() ? &desc[t.id] : nullptr);
      in_ptrs.push_back(t.valid() ? value[t.id]->data() : nullptr);
    }
    std::vector<double*> out_ptrs;
    std::vector<Buffer> outs;
    for (Tensor t : node.outputs) {
      const TensorDesc& d = desc[t.id];
      if (!d.shape.is_static())
        return invalid_argument("cpu backend: layer '{}' output shape {} is still dynamic with the given inputs", node.name,
                                d.shape.to_string());
      TO_ASSIGN_OR_RETURN(int64_t n, d.shape.element_count());
      outs.push_back(std::make_shared<std::vector<double>>(static_cast<size_t>(n)));
      out_ptrs.push_back(outs.back()->data());
      instance.outputs.push_back(d);
    }
    if (node.kind == OpKind::kPlugin)
      TO_RETURN_IF_ERROR(cpu::run_plugin_layer(network, instance, in_ptrs, out_ptrs));
    else
      TO_RETURN_IF_ERROR(cpu::find_kernel(node.kind)(cpu::KernelContext{instance, in_ptrs, out_ptrs}));
    for (size_t o = 0; o < outs.size(); ++o) {
      cpu::round_to_type(instance.outputs[o].dtype, outs[o]->data(), static_cast<int64_t>(outs[o]->size()));
      value[node.outputs[o].id] = std::move(outs[o]);
    }
    for (Tensor t : node.inputs)
      if (t.valid() && last_reader[t.id] == i) value[t.id].reset();
  }

  NamedArrays result;
  for (Tensor t : network.outputs()) {
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(desc[t.id].dtype, desc[t.id].shape));
    convert_elements(DataType::kFloat64, value[t.id]->data(), array.dtype(), array.data(),
                     static_cast<size_t>(array.element_count()));
    result[network.tensor(t).name] = std::move(array);
  }
  return result;
}

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace tensoracle::backends
