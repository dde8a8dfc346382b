// plugin: a placeholder node carrying a plugin's name, version, parameters and declared outputs.
// No backend implements one yet: plugins inside engines are not implemented, so planning refuses it.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

std::vector<Tensor> Network::plugin(const std::vector<Tensor>& inputs, const PluginAttributes& attrs) {
  return impl_->layer(inputs, {}, attrs);
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const PluginAttributes& a) {
  if (a.plugin.empty()) return ctx.error("the plugin name is empty");
  for (size_t i = 0; i < ctx.num_inputs(); ++i) TO_RETURN_IF_ERROR(ctx.require(i, "plugin input"));
  if (a.output_shapes.empty() || a.output_types.size() != a.output_shapes.size())
    return ctx.error("declare one output type per output shape ({} types, {} shapes)", a.output_types.size(),
                     a.output_shapes.size());
  std::vector<TensorDesc> out;
  for (size_t i = 0; i < a.output_shapes.size(); ++i) {
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
