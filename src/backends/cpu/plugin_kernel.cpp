// Plugin layers on the cpu backend (plugin_kernel.h).
#include "backends/cpu/plugin_kernel.h"

#include <fmt/format.h>

#include "backends/cpu/plugin_storage.h"
#include "core/errors.h"
#include "plugin/format_negotiation.h"
#include "plugin/plugin_call.h"
#include "tensoracle/hashing.h"

namespace tensoracle::backends::cpu {

namespace {

struct LayerPlugin {
  const RegisteredPlugin* registered = nullptr;
  std::unique_ptr<Plugin> plugin;
  std::string who;
};

// The layer's plugin, made from its parameters; it must have a CPU implementation.
Result<LayerPlugin> make_layer_plugin(const Network& network, const PluginAttributes& attrs) {
  LayerPlugin out;
  TO_ASSIGN_OR_RETURN(out.registered, network.plugins().find(attrs.plugin, attrs.version));
  TO_ASSIGN_OR_RETURN(const std::string parameters, from_hex(attrs.params));
  TO_ASSIGN_OR_RETURN(out.plugin, create_plugin(*out.registered, parameters));
  out.who = out.registered->display_name();
  TO_ASSIGN_OR_RETURN(const bool has_cpu, plugin::call_plugin(out.who, "has_cpu_implementation", [&]() {
                        return Result<bool>(out.plugin->has_cpu_implementation());
                      }));
  if (!has_cpu) return unsupported("plugin '{}' has no CPU implementation, which the cpu backend runs", out.who);
  return out;
}

// Every producer on the cpu backend writes linear tensors in their own types.
Result<PluginFormats> negotiate(const LayerPlugin& made, const std::vector<const TensorDesc*>& inputs, size_t num_outputs) {
  TO_ASSIGN_OR_RETURN(const PluginDeclaration declaration, plugin::call_plugin(made.who, "declaration", [&]() {
                        return Result<PluginDeclaration>(made.plugin->declaration());
                      }));
  const PluginIO& io = declaration.io;
  if (io.inputs.size() != inputs.size() || io.outputs.size() != num_outputs)
    return invalid_argument("plugin '{}' declares {} inputs and {} outputs, the layer has {} and {}", made.who,
                            io.inputs.size(), io.outputs.size(), inputs.size(), num_outputs);
  std::vector<plugin::ProvidedInput> provided;
  for (const TensorDesc* d : inputs) {
    TO_ASSERT(d != nullptr);  // plugin inputs are required
    provided.push_back({d->dtype, d->shape, {}});
  }
  PluginFormats formats;
  TO_ASSIGN_OR_RETURN(formats.inputs, plugin::negotiate_plugin_inputs(*made.plugin, made.who, io, provided));
  for (const PluginOutput& output : io.outputs) formats.outputs.push_back(output.type_format);
  return formats;
}

Status run(const Network& network, const NodeInstance& instance, const std::vector<const double*>& inputs,
           const std::vector<double*>& outputs) {
  const auto* attrs = instance.node.attributes<PluginAttributes>();
  TO_ASSERT(attrs != nullptr);
  TO_ASSIGN_OR_RETURN(LayerPlugin made, make_layer_plugin(network, *attrs));
  TO_ASSIGN_OR_RETURN(const PluginFormats formats, negotiate(made, instance.inputs, instance.outputs.size()));
  const std::string& who = made.who;
  Plugin& plugin = *made.plugin;

  std::vector<PluginTensorDesc> in_descs, out_descs;
  std::vector<HostArray> in_arrays, out_arrays;
  PluginBuffers buffers;
  for (size_t i = 0; i < instance.inputs.size(); ++i) {
    TO_ASSERT(inputs[i] != nullptr);
    const Dims& shape = instance.inputs[i]->shape;
    in_descs.push_back(PluginTensorDesc{formats.inputs[i], shape});
    TO_ASSIGN_OR_RETURN(HostArray array, to_plugin_storage(inputs[i], shape, formats.inputs[i]));
    in_arrays.push_back(std::move(array));
    buffers.inputs.push_back(in_arrays.back().data());
  }
  for (size_t o = 0; o < instance.outputs.size(); ++o) {
    const Dims& shape = instance.outputs[o].shape;
    out_descs.push_back(PluginTensorDesc{formats.outputs[o], shape});
    TO_ASSIGN_OR_RETURN(HostArray array, plugin_output_storage(shape, formats.outputs[o]));
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
    TO_RETURN_IF_ERROR(from_plugin_storage(out_arrays[o], instance.outputs[o].shape, formats.outputs[o].format, outputs[o]));
  return Status::ok();
}

}  // namespace

Status supports_plugin_layer(const Network& network, const Node& node) {
  const auto* attrs = node.attributes<PluginAttributes>();
  TO_ASSERT(attrs != nullptr);
  return make_layer_plugin(network, *attrs).status().with_context(fmt::format("layer '{}'", node.name));
}

Result<PluginFormats> plugin_layer_formats(const Network& network, const Node& node) {
  const auto* attrs = node.attributes<PluginAttributes>();
  TO_ASSERT(attrs != nullptr);
  const std::string layer = fmt::format("layer '{}'", node.name);
  TO_ASSIGN_OR_RETURN_CONTEXT(const LayerPlugin made, make_layer_plugin(network, *attrs), layer);
  std::vector<const TensorDesc*> inputs;
  for (Tensor t : node.inputs) inputs.push_back(t.valid() ? &network.tensor(t).desc : nullptr);
  for (const TensorDesc* d : inputs)
    if (d == nullptr) return invalid_argument("{}: a plugin input is omitted", layer);
  TO_ASSIGN_OR_RETURN_CONTEXT(PluginFormats formats, negotiate(made, inputs, node.outputs.size()), layer);
  return formats;
}

Status run_plugin_layer(const Network& network, const NodeInstance& instance, const std::vector<const double*>& inputs,
                        const std::vector<double*>& outputs) {
  return run(network, instance, inputs, outputs).with_context(fmt::format("layer '{}'", instance.node.name));
}

}  // namespace tensoracle::backends::cpu
