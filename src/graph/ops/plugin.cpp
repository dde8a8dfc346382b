// plugin: a node whose implementation is a plugin (plugin_runtime.h). Defined through the
// network's plugins, the layer asks its plugin which outputs it has, of which types and shapes,
// and whether it accepts the inputs; the node records the answers, so inference (and every later
// reader of an engine) needs the plugin for nothing but running it.
#include <fmt/format.h>

#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "plugin/format_negotiation.h"
#include "plugin/plugin_call.h"
#include "tensoracle/hashing.h"

namespace tensoracle {

namespace {

// An output declared HWC or HWC8 must be an image its format applies to.
Status check_output_formats(const std::string& who, const PluginIO& io, const PluginAttributes& attrs) {
  for (size_t o = 0; o < io.outputs.size(); ++o) {
    const Status applies = check_format_applies(io.outputs[o].type_format, attrs.output_shapes[o]);
    if (!applies.is_ok())
      return invalid_argument("plugin '{}' output {} '{}': {}", who, o, io.outputs[o].name, applies.message());
  }
  return Status::ok();
}

// The recorded outputs of a plugin layer with `inputs`, from the plugin made from `parameters`.
Status resolve_outputs(const Network& net, const std::vector<Tensor>& inputs, std::string_view parameters,
                       PluginAttributes& attrs) {
  TO_ASSIGN_OR_RETURN(const RegisteredPlugin* registered, net.plugins().find(attrs.plugin, attrs.version));
  const std::string who = registered->display_name();
  TO_ASSIGN_OR_RETURN(std::unique_ptr<Plugin> plugin, create_plugin(*registered, parameters));
  TO_ASSIGN_OR_RETURN(const PluginDeclaration declaration, plugin::call_plugin(who, "declaration", [&]() {
                        return Result<PluginDeclaration>(plugin->declaration());
                      }));
  const PluginIO& io = declaration.io;
  if (io.inputs.size() != inputs.size())
    return invalid_argument("plugin '{}' takes {} inputs, {} given", who, io.inputs.size(), inputs.size());
  // The formats every backend starts from: what the producers write, in their own types. A
  // layer no combination can serve is refused here, when the network is defined.
  std::vector<plugin::ProvidedInput> provided;
  for (Tensor t : inputs) provided.push_back({net.tensor(t).desc.dtype, net.tensor(t).desc.shape, {}});
  TO_ASSIGN_OR_RETURN(const std::vector<TypeFormat> chosen, plugin::negotiate_plugin_inputs(*plugin, who, io, provided));
  std::vector<PluginTensorDesc> descs;
  for (size_t i = 0; i < inputs.size(); ++i) descs.push_back(PluginTensorDesc{chosen[i], provided[i].shape});
  attrs.output_types.clear();
  attrs.output_shapes.clear();
  attrs.output_copy_inputs.clear();
  size_t computed = 0;
  for (const PluginOutput& output : io.outputs) {
    attrs.output_types.push_back(output.type_format.type);
    const bool copies = output.shape.kind == OutputShapeRule::Kind::kCopyInput;
    attrs.output_copy_inputs.push_back(copies ? output.shape.input_index : -1);
    attrs.output_shapes.push_back(copies ? descs[static_cast<size_t>(output.shape.input_index)].shape : Dims{});
    computed += copies ? 0 : 1;
  }
  if (computed == 0) return check_output_formats(who, io, attrs);
  TO_ASSIGN_OR_RETURN(const std::vector<Dims> shapes, plugin::call_plugin(who, "computed_output_shapes", [&]() {
                        return plugin->computed_output_shapes(descs);
                      }));
  if (shapes.size() != computed)
    return invalid_argument("plugin '{}' computed_output_shapes: returned {} shapes for its {} computed outputs", who,
                            shapes.size(), computed);
  size_t next = 0;
  for (size_t o = 0; o < io.outputs.size(); ++o) {
    if (attrs.output_copy_inputs[o] >= 0) continue;
    const Dims& shape = shapes[next++];
    if (!shape.is_static())
      return unsupported("plugin '{}' output '{}': computed shape {} is not static (a computed output shape must not "
                         "depend on dynamic input dims yet)",
                         who, io.outputs[o].name, shape.to_string());
    attrs.output_shapes[o] = shape;
  }
  return check_output_formats(who, io, attrs);
}

}  // namespace

std::vector<Tensor> Network::plugin(const std::vector<Tensor>& inputs, const PluginAttributes& attrs) {
  return impl_->layer(inputs, {}, attrs);
}

std::vector<Tensor> Network::plugin(const std::vector<Tensor>& inputs, const PluginIdentity& identity,
                                    std::string_view parameters, std::string layer_name) {
  PluginAttributes attrs;
  attrs.plugin = plugin_qualified_name(identity);
  attrs.version = identity.version;
  attrs.params = to_hex(parameters);
  // After an earlier error, or with an invalid input, the generic path reports (or stays quiet).
  if (!impl_->status.is_ok() || impl_->any_invalid(inputs)) return impl_->layer(inputs, {}, attrs);
  attrs.name = layer_name.empty() ? impl_->generated_name(OpKind::kPlugin) : std::move(layer_name);
  const Status resolved = resolve_outputs(*this, inputs, parameters, attrs);
  if (!resolved.is_ok()) {
    impl_->fail(resolved.with_context(fmt::format("layer '{}' (plugin)", attrs.name)));
    return {};
  }
  return impl_->layer(inputs, {}, attrs);
}

void Network::set_plugins(PluginRegistry plugins) { impl_->plugins = std::move(plugins); }
const PluginRegistry& Network::plugins() const { return impl_->plugins; }

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const PluginAttributes& a) {
  if (a.plugin.empty()) return ctx.error("the plugin name is empty");
  if (!from_hex(a.params).is_ok())
    return ctx.error("params must be the plugin's parameters in hex ({} characters given)", a.params.size());
  for (size_t i = 0; i < ctx.num_inputs(); ++i) TO_RETURN_IF_ERROR(ctx.require(i, "plugin input"));
  if (a.output_shapes.empty() || a.output_types.size() != a.output_shapes.size())
    return ctx.error("declare one output type per output shape ({} types, {} shapes)", a.output_types.size(),
                     a.output_shapes.size());
  if (!a.output_copy_inputs.empty() && a.output_copy_inputs.size() != a.output_shapes.size())
    return ctx.error("output_copy_inputs has {} entries for {} outputs", a.output_copy_inputs.size(), a.output_shapes.size());
  std::vector<TensorDesc> out;
  for (size_t i = 0; i < a.output_shapes.size(); ++i) {
    const int64_t copied = a.output_copy_inputs.empty() ? -1 : a.output_copy_inputs[i];
    if (copied < -1 || copied >= static_cast<int64_t>(ctx.num_inputs()))
      return ctx.error("output {} copies the shape of input {}, which does not exist ({} inputs)", i, copied,
                       ctx.num_inputs());
    if (copied >= 0) {
      out.push_back({a.output_types[i], ctx.in(static_cast<size_t>(copied)).shape});
      continue;
    }
    for (int64_t d : a.output_shapes[i])
      if (d < -1) return ctx.error("output {} shape {} has an invalid dim {}", i, a.output_shapes[i].to_string(), d);
    out.push_back({a.output_types[i], a.output_shapes[i]});
  }
  return out;
}
}  // namespace

extern const OpDef kPluginOp = define_op<PluginAttributes, &infer>(0, -1);

}  // namespace graph
}  // namespace tensoracle
