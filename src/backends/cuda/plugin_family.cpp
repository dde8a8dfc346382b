// The plugin family (plugin_family.h).
#include "backends/cuda/plugin_family.h"

#include <fmt/format.h>

#include "backends/cuda/kernels/kernel_family.h"
#include "backends/cuda/plugin_kernels.h"
#include "plugin/plugin_call.h"
#include "tensoracle/hashing.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamily = "plugin";

struct StepPlugin {
  std::string who;  // "test::scale_add 1.0.0"
  const RegisteredPlugin* registered = nullptr;
  // Declared before the plugin, so that the plugin, which may hold its kernels, goes first.
  std::shared_ptr<PluginKernelSource> kernels;
  std::unique_ptr<Plugin> plugin;
  std::vector<PluginTensorDesc> inputs, outputs;
};

// The step's plugin, made from the layer's parameters, with the step's tensor descriptions.
Result<StepPlugin> make_step_plugin(const StepInstance& step) {
  const auto* attrs = step.anchor.node.attributes<PluginAttributes>();
  TO_ASSERT(attrs != nullptr && step.plugins != nullptr);
  TO_ASSIGN_OR_RETURN(const RegisteredPlugin* registered, step.plugins->find(attrs->plugin, attrs->version));
  TO_ASSIGN_OR_RETURN(const std::string parameters, from_hex(attrs->params));
  StepPlugin out;
  out.who = registered->display_name();
  out.registered = registered;
  TO_ASSIGN_OR_RETURN(out.plugin, create_plugin(*registered, parameters));
  for (const TensorDesc* in : step.anchor.inputs) {
    TO_ASSERT(in != nullptr);  // plugin inputs are required
    out.inputs.push_back(PluginTensorDesc{{in->dtype, TensorFormat::kLinear}, in->shape});
  }
  for (const TensorDesc& o : step.outputs) out.outputs.push_back(PluginTensorDesc{{o.dtype, TensorFormat::kLinear}, o.shape});
  return out;
}

Result<size_t> plugin_workspace(const StepPlugin& made) {
  return plugin::call_plugin(made.who, "workspace_bytes",
                             [&]() { return made.plugin->workspace_bytes(made.inputs, made.outputs); });
}

class PluginTactic final : public KernelTactic {
 public:
  PluginTactic() : KernelTactic(kFamily, "") {}

  // The planner sizes the workspace from this; a plugin that cannot say is refused in
  // initialize(), which asks again.
  size_t workspace_size(const StepInstance& step) const override {
    auto made = make_step_plugin(step);
    if (!made.is_ok()) return 0;
    auto bytes = plugin_workspace(*made);
    return bytes.is_ok() ? *bytes : 0;
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    initialized_ = false;
    const std::string layer = fmt::format("layer '{}'", step.anchor.node.name);
    TO_ASSIGN_OR_RETURN_CONTEXT(made_, make_step_plugin(step), layer);
    TO_ASSIGN_OR_RETURN_CONTEXT(workspace_bytes_, plugin_workspace(made_), layer);
    if (workspace_bytes_ > ctx.workspace_bytes)
      return invalid_argument("{}: plugin '{}' needs {} bytes of workspace at these shapes, the plan provides {}", layer,
                              made_.who, workspace_bytes_, ctx.workspace_bytes);
    if (!made_.registered->creator.bundle.kernels.empty()) {
      TO_ASSERT(ctx.device != nullptr);
      TO_ASSIGN_OR_RETURN_CONTEXT(made_.kernels,
                                  load_plugin_kernels(*made_.registered, ctx.device->device, ctx.device->compute_capability()),
                                  layer);
      TO_RETURN_IF_ERROR(plugin::call_plugin(made_.who, "attach_kernels", [&]() {
                           return made_.plugin->attach_kernels(*made_.kernels);
                         }).with_context(layer));
    }
    TO_RETURN_IF_ERROR(plugin::call_plugin(made_.who, "configure", [&]() {
                         return made_.plugin->configure(made_.inputs, made_.outputs);
                       }).with_context(layer));
    // Sized here, so that run() only fills in addresses.
    buffers_.inputs.assign(made_.inputs.size(), nullptr);
    buffers_.outputs.assign(made_.outputs.size(), nullptr);
    initialized_ = true;
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    TO_ASSERT(buffers.inputs.size() == buffers_.inputs.size() && buffers.outputs.size() == buffers_.outputs.size());
    for (size_t i = 0; i < buffers.inputs.size(); ++i) buffers_.inputs[i] = buffers.inputs[i].data;
    for (size_t o = 0; o < buffers.outputs.size(); ++o) buffers_.outputs[o] = buffers.outputs[o].data;
    void* workspace = workspace_bytes_ == 0 ? nullptr : buffers.workspace;
    const Status status = made_.plugin->enqueue(buffers_, workspace, ctx.stream);  // noexcept by contract
    if (status.is_ok()) return status;
    return status.with_context(fmt::format("layer '{}': plugin '{}' enqueue", step.anchor.node.name, made_.who));
  }

 private:
  StepPlugin made_;
  size_t workspace_bytes_ = 0;
  PluginBuffers buffers_;
};

class PluginFamily final : public KernelFamily {
 public:
  PluginFamily() : KernelFamily(kFamily) {}

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    if (step.anchor.node.kind != OpKind::kPlugin) return refuse(step, "not a plugin layer");
    if (step.plugins == nullptr) return refuse(step, "no plugins are available to the step");
    TO_RETURN_IF_ERROR(check_plain_step(step));
    const std::string layer = fmt::format("layer '{}'", step.anchor.node.name);
    TO_ASSIGN_OR_RETURN_CONTEXT(const StepPlugin made, make_step_plugin(step), layer);
    // A GPU its bundle has no cubin for is refused when the engine is built, not when it runs.
    if (made.registered->creator.bundle.kernels.empty()) return Status::ok();
    return check_bundle_serves(*made.registered, device.compute_capability()).with_context(layer);
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<PluginTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_plugin_family() { return std::make_shared<PluginFamily>(); }

}  // namespace tensoracle::backends::cuda
