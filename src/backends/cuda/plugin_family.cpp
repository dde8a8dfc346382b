// The plugin family (plugin_family.h).
#include "backends/cuda/plugin_family.h"

#include <fmt/format.h>

#include <algorithm>

#include "backends/cuda/kernels/format_conversion.h"
#include "backends/cuda/kernels/kernel_family.h"
#include "backends/cuda/plugin_kernels.h"
#include "backends/plugin_formats.h"
#include "plugin/format_negotiation.h"
#include "plugin/plugin_call.h"
#include "tensoracle/hashing.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamily = "plugin";
constexpr size_t kScratchAlignment = 256;

size_t aligned(size_t bytes) { return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment; }

Layout layout_at(const std::vector<Layout>& layouts, size_t i) { return i < layouts.size() ? layouts[i] : Layout::kLinear; }

// What the producer of input i wrote, as format negotiation sees it.
plugin::ProvidedInput provided_input(const StepInstance& step, size_t i) {
  const TensorDesc& d = *step.anchor.inputs[i];
  return {d.dtype, d.shape, formats_of_layout(layout_at(step.input_layouts, i), d)};
}

// Whether output o's buffer already is the format the plugin writes it in.
bool output_in_place(const StepInstance& step, size_t o, const TypeFormat& written) {
  const std::vector<TensorFormat> formats = formats_of_layout(layout_at(step.output_layouts, o), step.outputs[o]);
  return written.type == step.outputs[o].dtype &&
         std::find(formats.begin(), formats.end(), written.format) != formats.end();
}

struct StepPlugin {
  std::string who;  // "test::scale_add 1.0.0"
  const RegisteredPlugin* registered = nullptr;
  // Declared before the plugin, so that the plugin, which may hold its kernels, goes first.
  std::shared_ptr<PluginKernelSource> kernels;
  std::unique_ptr<Plugin> plugin;
  PluginIO io;
};

Result<StepPlugin> make_plugin(const StepInstance& step) {
  const auto* attrs = step.anchor.node.attributes<PluginAttributes>();
  TO_ASSERT(attrs != nullptr && step.plugins != nullptr);
  TO_ASSIGN_OR_RETURN(const RegisteredPlugin* registered, step.plugins->find(attrs->plugin, attrs->version));
  TO_ASSIGN_OR_RETURN(const std::string parameters, from_hex(attrs->params));
  StepPlugin out;
  out.who = registered->display_name();
  out.registered = registered;
  TO_ASSIGN_OR_RETURN(out.plugin, create_plugin(*registered, parameters));
  TO_ASSIGN_OR_RETURN(const PluginDeclaration declaration, plugin::call_plugin(out.who, "declaration", [&]() {
                        return Result<PluginDeclaration>(out.plugin->declaration());
                      }));
  out.io = declaration.io;
  if (out.io.inputs.size() != step.anchor.inputs.size() || out.io.outputs.size() != step.outputs.size())
    return invalid_argument("plugin '{}' declares {} inputs and {} outputs, the step has {} and {}", out.who,
                            out.io.inputs.size(), out.io.outputs.size(), step.anchor.inputs.size(), step.outputs.size());
  for (const TensorDesc* in : step.anchor.inputs) TO_ASSERT(in != nullptr);  // plugin inputs are required
  return out;
}

// The formats the plugin gets for the step's layouts: negotiated from what the producers wrote.
Result<PluginFormats> negotiate(const StepInstance& step, const StepPlugin& made) {
  std::vector<plugin::ProvidedInput> provided;
  for (size_t i = 0; i < step.anchor.inputs.size(); ++i) provided.push_back(provided_input(step, i));
  PluginFormats formats;
  TO_ASSIGN_OR_RETURN(formats.inputs, plugin::negotiate_plugin_inputs(*made.plugin, made.who, made.io, provided));
  for (const PluginOutput& output : made.io.outputs) formats.outputs.push_back(output.type_format);
  return formats;
}

// Formats a plan recorded: the plugin must still support them, in order, and write its outputs so.
Status check_recorded(const StepPlugin& made, const PluginFormats& recorded) {
  std::vector<TypeFormat> before;
  for (size_t i = 0; i < recorded.inputs.size(); ++i) {
    TO_ASSIGN_OR_RETURN(const bool supported, plugin::call_plugin(made.who, "supports", [&]() {
                          return Result<bool>(made.plugin->supports(static_cast<int>(i), recorded.inputs[i], before));
                        }));
    if (!supported)
      return invalid_argument("the plan records {} for input {} '{}', which plugin '{}' does not support",
                              type_format_name(recorded.inputs[i]), i, made.io.inputs[i].name, made.who);
    before.push_back(recorded.inputs[i]);
  }
  for (size_t o = 0; o < recorded.outputs.size(); ++o)
    if (recorded.outputs[o] != made.io.outputs[o].type_format)
      return invalid_argument("the plan records {} for output {} '{}', plugin '{}' writes {}",
                              type_format_name(recorded.outputs[o]), o, made.io.outputs[o].name, made.who,
                              type_format_name(made.io.outputs[o].type_format));
  return Status::ok();
}

// One tensor converted around the plugin: where its plugin-side copy lives in the workspace.
struct Scratch {
  bool converted = false;
  size_t offset = 0;  // from the workspace's start
  size_t bytes = 0;
};

// The step's conversions and the workspace they and the plugin need, for the step's shapes.
struct StepLayout {
  std::vector<PluginTensorDesc> inputs, outputs;
  std::vector<Scratch> input_scratch, output_scratch;
  size_t plugin_workspace = 0;
  size_t total_workspace = 0;
};

Result<StepLayout> lay_out(const StepInstance& step, const StepPlugin& made, const PluginFormats& formats) {
  StepLayout out;
  for (size_t i = 0; i < formats.inputs.size(); ++i)
    out.inputs.push_back(PluginTensorDesc{formats.inputs[i], step.anchor.inputs[i]->shape});
  for (size_t o = 0; o < formats.outputs.size(); ++o)
    out.outputs.push_back(PluginTensorDesc{formats.outputs[o], step.outputs[o].shape});
  TO_ASSIGN_OR_RETURN(out.plugin_workspace, plugin::call_plugin(made.who, "workspace_bytes", [&]() {
                        return made.plugin->workspace_bytes(out.inputs, out.outputs);
                      }));
  size_t offset = aligned(out.plugin_workspace);
  const auto place = [&](const PluginTensorDesc& desc, bool converted) -> Result<Scratch> {
    Scratch s;
    if (!converted) return s;
    TO_ASSIGN_OR_RETURN(s.bytes, formatted_bytes(desc.type_format, desc.shape));
    s.converted = true;
    s.offset = offset;
    offset += aligned(s.bytes);
    return s;
  };
  for (size_t i = 0; i < out.inputs.size(); ++i) {
    TO_ASSIGN_OR_RETURN(Scratch s, place(out.inputs[i], !plugin::provided_as_is(provided_input(step, i), formats.inputs[i])));
    out.input_scratch.push_back(s);
  }
  for (size_t o = 0; o < out.outputs.size(); ++o) {
    TO_ASSIGN_OR_RETURN(Scratch s, place(out.outputs[o], !output_in_place(step, o, formats.outputs[o])));
    out.output_scratch.push_back(s);
  }
  out.total_workspace = offset == aligned(out.plugin_workspace) ? out.plugin_workspace : offset;
  return out;
}

class PluginTactic final : public KernelTactic {
 public:
  // `formats`: negotiated when the engine was built, or recorded in its plan.
  PluginTactic(StepPlugin made, PluginFormats formats)
      : KernelTactic(kFamily, ""), made_(std::move(made)), formats_(std::move(formats)) {}

  nlohmann::json choice() const override { return nlohmann::json{{"formats", plugin_formats_to_json(formats_)}}; }

  // The planner sizes the workspace from this; a plugin that cannot say is refused in
  // initialize(), which asks again.
  size_t workspace_size(const StepInstance& step) const override {
    auto laid = lay_out(step, made_, formats_);
    return laid.is_ok() ? laid->total_workspace : 0;
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    initialized_ = false;
    const std::string layer = fmt::format("layer '{}'", step.anchor.node.name);
    TO_ASSIGN_OR_RETURN_CONTEXT(laid_, lay_out(step, made_, formats_), layer);
    if (laid_.total_workspace > ctx.workspace_bytes)
      return invalid_argument("{}: plugin '{}' needs {} bytes of workspace at these shapes (its own and its format "
                              "conversions'), the plan provides {}",
                              layer, made_.who, laid_.total_workspace, ctx.workspace_bytes);
    if (!made_.registered->creator.bundle.kernels.empty() && made_.kernels == nullptr) {
      TO_ASSERT(ctx.device != nullptr);
      TO_ASSIGN_OR_RETURN_CONTEXT(made_.kernels,
                                  load_plugin_kernels(*made_.registered, ctx.device->device, ctx.device->compute_capability()),
                                  layer);
      TO_RETURN_IF_ERROR(plugin::call_plugin(made_.who, "attach_kernels", [&]() {
                           return made_.plugin->attach_kernels(*made_.kernels);
                         }).with_context(layer));
    }
    TO_RETURN_IF_ERROR(plugin::call_plugin(made_.who, "configure", [&]() {
                         return made_.plugin->configure(laid_.inputs, laid_.outputs);
                       }).with_context(layer));
    // Sized here, so that run() only fills in addresses.
    buffers_.inputs.assign(laid_.inputs.size(), nullptr);
    buffers_.outputs.assign(laid_.outputs.size(), nullptr);
    initialized_ = true;
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    TO_ASSERT(buffers.inputs.size() == buffers_.inputs.size() && buffers.outputs.size() == buffers_.outputs.size());
    auto* workspace = static_cast<unsigned char*>(buffers.workspace);
    const auto scratch = [&](const Scratch& s) { return static_cast<void*>(workspace + s.offset); };
    for (size_t i = 0; i < buffers.inputs.size(); ++i) {
      if (!laid_.input_scratch[i].converted) {
        buffers_.inputs[i] = buffers.inputs[i].data;
        continue;
      }
      const FormattedTensor to{laid_.inputs[i].type_format, laid_.inputs[i].shape, scratch(laid_.input_scratch[i])};
      TO_RETURN_IF_ERROR(launch_to_format(buffers.inputs[i], to, ctx.stream)
                             .with_context(fmt::format("layer '{}': converting input {}", step.anchor.node.name, i)));
      buffers_.inputs[i] = to.data;
    }
    for (size_t o = 0; o < buffers.outputs.size(); ++o)
      buffers_.outputs[o] = laid_.output_scratch[o].converted ? scratch(laid_.output_scratch[o]) : buffers.outputs[o].data;
    void* plugin_workspace = laid_.plugin_workspace == 0 ? nullptr : buffers.workspace;
    const Status status = made_.plugin->enqueue(buffers_, plugin_workspace, ctx.stream);  // noexcept by contract
    if (!status.is_ok())
      return status.with_context(fmt::format("layer '{}': plugin '{}' enqueue", step.anchor.node.name, made_.who));
    for (size_t o = 0; o < buffers.outputs.size(); ++o) {
      if (!laid_.output_scratch[o].converted) continue;
      const FormattedTensor from{laid_.outputs[o].type_format, laid_.outputs[o].shape, buffers_.outputs[o]};
      TO_RETURN_IF_ERROR(launch_from_format(from, buffers.outputs[o], ctx.stream)
                             .with_context(fmt::format("layer '{}': converting output {}", step.anchor.node.name, o)));
    }
    return Status::ok();
  }

 private:
  StepPlugin made_;
  PluginFormats formats_;
  StepLayout laid_;
  PluginBuffers buffers_;
};

class PluginFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamily; }

  // A plugin reads or writes channels-last tensors in place where its formats are HWC (or HWC8
  // without padding), and converts otherwise. can_implement refuses an nhwc input the plugin
  // reads LINEAR, so that its producer writes it linear instead of the step converting it back;
  // an output goes nhwc only for consumers that prefer it, so converting into it is no loss.
  FamilyTraits traits(const Node&) const override {
    FamilyTraits t;
    t.nhwc = true;
    return t;
  }

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    if (step.anchor.node.kind != OpKind::kPlugin) return refuse(step, "not a plugin layer");
    if (step.plugins == nullptr) return refuse(step, "no plugins are available to the step");
    if (step.has_epilogue()) return refuse(step, "fuses no epilogue ({})", step.program.to_string());
    if (step.computes_quantization()) return refuse(step, "fuses no quantize or dequantize layers");
    for (size_t i = 0; i < step.anchor.inputs.size(); ++i) {
      if (!step.anchor.inputs[i]) return refuse(step, "input {} is omitted", i);
      TO_RETURN_IF_ERROR(check_tensor(step, "input", i, *step.anchor.inputs[i], layout_at(step.input_layouts, i)));
    }
    for (size_t o = 0; o < step.outputs.size(); ++o)
      TO_RETURN_IF_ERROR(check_tensor(step, "output", o, step.outputs[o], layout_at(step.output_layouts, o)));
    const std::string layer = fmt::format("layer '{}'", step.anchor.node.name);
    TO_ASSIGN_OR_RETURN_CONTEXT(const StepPlugin made, make_plugin(step), layer);
    TO_ASSIGN_OR_RETURN_CONTEXT(const PluginFormats formats, negotiate(step, made), layer);
    for (size_t i = 0; i < formats.inputs.size(); ++i)
      if (layout_at(step.input_layouts, i) == Layout::kNhwc && formats.inputs[i].format == TensorFormat::kLinear)
        return refuse(step, "input {} is nhwc, plugin '{}' reads it {}", i, made.who, type_format_name(formats.inputs[i]));
    // A GPU its bundle has no cubin for is refused when the engine is built, not when it runs.
    if (made.registered->creator.bundle.kernels.empty()) return Status::ok();
    return check_bundle_serves(*made.registered, device.compute_capability()).with_context(layer);
  }

  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext&,
                                                              int) const override {
    const std::string layer = fmt::format("layer '{}'", step.anchor.node.name);
    TO_ASSIGN_OR_RETURN_CONTEXT(StepPlugin made, make_plugin(step), layer);
    TO_ASSIGN_OR_RETURN_CONTEXT(PluginFormats formats, negotiate(step, made), layer);
    std::vector<std::unique_ptr<CudaTactic>> out;
    out.push_back(std::make_unique<PluginTactic>(std::move(made), std::move(formats)));
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override {
    const std::string layer = fmt::format("layer '{}': {}: recorded choice", step.anchor.node.name, kFamily);
    const JsonField field(choice, layer, StatusCode::kInvalidArgument);
    TO_RETURN_IF_ERROR(field.allow_keys({"formats"}));
    TO_ASSIGN_OR_RETURN(const JsonField formats_field, field.member("formats"));
    std::vector<TensorDesc> inputs;
    for (const TensorDesc* in : step.anchor.inputs) {
      if (in == nullptr) return invalid_argument("{}: a plugin input is omitted", layer);
      inputs.push_back(*in);
    }
    TO_ASSIGN_OR_RETURN(PluginFormats formats, plugin_formats_from_json(formats_field, inputs, step.outputs));
    TO_ASSIGN_OR_RETURN_CONTEXT(StepPlugin made, make_plugin(step), layer);
    TO_RETURN_IF_ERROR(check_recorded(made, formats).with_context(layer));
    return std::unique_ptr<CudaTactic>(std::make_unique<PluginTactic>(std::move(made), std::move(formats)));
  }

 private:
  template <typename... Args>
  Status refuse(const StepInstance& step, fmt::format_string<Args...> format, Args&&... args) const {
    return unsupported("layer '{}': {}: {}", step.anchor.node.name, kFamily, fmt::format(format, std::forward<Args>(args)...));
  }

  Status check_tensor(const StepInstance& step, const char* role, size_t i, const TensorDesc& desc, Layout layout) const {
    if (desc.shape.rank() > static_cast<size_t>(TensorGeometry::kMaxRank))
      return refuse(step, "{} {} has rank {} (at most {})", role, i, desc.shape.rank(), TensorGeometry::kMaxRank);
    if (!desc.shape.is_static()) return refuse(step, "{} {} has a dynamic shape {}", role, i, desc.shape.to_string());
    if (layout != Layout::kLinear && !(layout == Layout::kNhwc && desc.shape.rank() == 4))
      return refuse(step, "{} {} in layout {} (takes linear, or nhwc at rank 4)", role, i, layout_name(layout));
    return Status::ok();
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_plugin_family() { return std::make_shared<PluginFamily>(); }

}  // namespace tensoracle::backends::cuda
