// plugin: a placeholder node carrying a plugin's name, version, parameters and declared outputs.
// The plugin layer resolves it to an implementation (SPEC F9).
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

std::vector<Tensor> Network::plugin(const std::vector<Tensor>& inputs, const PluginAttributes& a) {
  std::string types;
  std::vector<int64_t> ranks, dims;
  for (DataType t : a.output_types) types += (types.empty() ? "" : ",") + std::string(data_type_name(t));
  for (const Dims& d : a.output_shapes) {
    ranks.push_back(static_cast<int64_t>(d.rank()));
    dims.insert(dims.end(), d.begin(), d.end());
  }
  AttributeMap map{{"plugin", a.plugin},       {"version", a.version},     {"params", a.params},
                   {"output_types", types},    {"output_ranks", ranks},    {"output_dims", dims}};
  return impl_->layer(*this, OpKind::kPlugin, inputs, {}, std::move(map), a.name);
}

namespace graph {
namespace {
Result<std::vector<TensorDesc>> infer(const InferContext& ctx) {
  if (get_string(ctx.attrs, "plugin").empty()) return ctx.error("the plugin name is empty");
  for (size_t i = 0; i < ctx.num_inputs(); ++i) TO_RETURN_IF_ERROR(ctx.require(i, "plugin input"));
  const std::string types = get_string(ctx.attrs, "output_types");
  const std::vector<int64_t> ranks = get_ints(ctx.attrs, "output_ranks");
  const std::vector<int64_t> dims = get_ints(ctx.attrs, "output_dims");
  std::vector<TensorDesc> out;
  size_t pos = 0, next_dim = 0;
  for (int64_t rank : ranks) {
    if (pos > types.size()) return ctx.error("fewer output types than output shapes");
    const size_t comma = std::min(types.find(',', pos), types.size());
    TO_ASSIGN_OR_RETURN(DataType type, parse_data_type(types.substr(pos, comma - pos)));
    pos = comma + 1;
    if (rank < 0 || next_dim + static_cast<size_t>(rank) > dims.size())
      return ctx.error("output shapes are inconsistent with their ranks {}", join_ints(ranks));
    out.push_back({type, Dims(std::vector<int64_t>(dims.begin() + next_dim, dims.begin() + next_dim + rank))});
    next_dim += static_cast<size_t>(rank);
  }
  if (out.empty() || pos <= types.size()) return ctx.error("declare one output type per output shape (types '{}')", types);
  return out;
}
}  // namespace

extern const OpDef kPluginOp{0, -1, &infer};

}  // namespace graph
}  // namespace tensoracle
