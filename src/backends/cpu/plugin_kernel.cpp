// Plugin layers on the cpu backend (plugin_kernel.h).
#include "backends/cpu/plugin_kernel.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "plugin/plugin_call.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/hashing.h"

namespace tensoracle::backends::cpu {

namespace {

struct LayerPlugin {
  const RegisteredPlugin* registered = nullptr;
  std::unique_ptr<Plugin> plugin;
};

// The layer's plugin, made from its parameters; it must have a CPU implementation.
Result<LayerPlugin> make_layer_plugin(const Network& network, const PluginAttributes& attrs) {
  LayerPlugin out;
  TO_ASSIGN_OR_RETURN(out.registered, network.plugins().find(attrs.plugin, attrs.version));
  TO_ASSIGN_OR_RETURN(const std::string parameters, from_hex(attrs.params));
  TO_ASSIGN_OR_RETURN(out.plugin, create_plugin(*out.registered, parameters));
  const std::string who = out.registered->display_name();
  TO_ASSIGN_OR_RETURN(const bool has_cpu, plugin::call_plugin(who, "has_cpu_implementation", [&]() {
                        return Result<bool>(out.plugin->has_cpu_implementation());
                      }));
  if (!has_cpu) return unsupported("plugin '{}' has no CPU implementation, which the cpu backend runs", who);
  return out;
}

Status run(const Network& network, const NodeInstance& instance, const std::vector<const double*>& inputs,
           const std::vector<double*>& outputs) {
  const auto* attrs = instance.node.attributes<PluginAttributes>();
  TO_ASSERT(attrs != nullptr);
  TO_ASSIGN_OR_RETURN(LayerPlugin made, make_layer_plugin(network, *attrs));
  const std::string who = made.registered->display_name();
  Plugin& plugin = *made.plugin;

  std::vector<PluginTensorDesc> in_descs, out_descs;
  std::vector<HostArray> in_arrays, out_arrays;
  PluginBuffers buffers;
  for (size_t i = 0; i < instance.inputs.size(); ++i) {
    TO_ASSERT(instance.inputs[i] != nullptr && inputs[i] != nullptr);  // plugin inputs are required
    const TensorDesc& d = *instance.inputs[i];
    in_descs.push_back(PluginTensorDesc{{d.dtype, TensorFormat::kLinear}, d.shape});
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(d.dtype, d.shape));
    convert_elements(DataType::kFloat64, inputs[i], d.dtype, array.data(), static_cast<size_t>(array.element_count()));
    in_arrays.push_back(std::move(array));
    buffers.inputs.push_back(in_arrays.back().data());
  }
  for (const TensorDesc& d : instance.outputs) {
    out_descs.push_back(PluginTensorDesc{{d.dtype, TensorFormat::kLinear}, d.shape});
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(d.dtype, d.shape));
    out_arrays.push_back(std::move(array));
    buffers.outputs.push_back(out_arrays.back().data());
  }
  TO_RETURN_IF_ERROR(plugin::call_plugin(who, "configure", [&]() { return plugin.configure(in_descs, out_descs); }));
  TO_ASSIGN_OR_RETURN(const size_t workspace_bytes, plugin::call_plugin(who, "workspace_bytes", [&]() {
                        return plugin.workspace_bytes(in_descs, out_descs);
                      }));
  std::vector<unsigned char> workspace(workspace_bytes);
  TO_RETURN_IF_ERROR(plugin::call_plugin(who, "run_on_host", [&]() {
    return plugin.run_on_host(buffers, workspace.empty() ? nullptr : workspace.data());
  }));
  for (size_t o = 0; o < out_arrays.size(); ++o)
    convert_elements(out_arrays[o].dtype(), out_arrays[o].data(), DataType::kFloat64, outputs[o],
                     static_cast<size_t>(out_arrays[o].element_count()));
  return Status::ok();
}

}  // namespace

Status supports_plugin_layer(const Network& network, const Node& node) {
  const auto* attrs = node.attributes<PluginAttributes>();
  TO_ASSERT(attrs != nullptr);
  return make_layer_plugin(network, *attrs).status().with_context(fmt::format("layer '{}'", node.name));
}

Status run_plugin_layer(const Network& network, const NodeInstance& instance, const std::vector<const double*>& inputs,
                        const std::vector<double*>& outputs) {
  return run(network, instance, inputs, outputs).with_context(fmt::format("layer '{}'", instance.node.name));
}

}  // namespace tensoracle::backends::cpu
