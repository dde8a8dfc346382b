// cast(constant) -> constant (passes.h).
#include "core/errors.h"
#include "passes/passes.h"
#include "passes/rebuild.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::passes {

Result<Network> fold_constant_casts(const Network& network) {
  return rebuild(network, [&](Rebuild& r, size_t index) -> Result<bool> {
    const Node& node = network.node(index);
    if (node.kind != OpKind::kCast) return false;
    const int64_t producer = network.tensor(node.inputs[0]).producer;
    if (producer < 0 || network.node(static_cast<size_t>(producer)).kind != OpKind::kConstant) return false;
    // Cast from the target's constant (itself possibly a folded cast): round once per cast, as
    // the layers would.
    const Tensor source = r.mapped(node.inputs[0]);
    const Node& constant = r.target().node(static_cast<size_t>(r.target().tensor(source).producer));
    const ArrayView& view = constant.constant->view;
    const DataType type = network.tensor(node.outputs[0]).desc.dtype;
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(type, view.shape));
    convert_elements(view.dtype, view.data, type, array.data(), static_cast<size_t>(view.element_count()));
    Tensor t = r.target().add_constant(std::move(array), node.name);
    TO_RETURN_IF_ERROR(r.target().status());
    r.target().set_tensor_name(t, network.tensor(node.outputs[0]).name);
    r.map(node.outputs[0], t);
    return true;
  });
}

Result<Network> optimize_for_inference(const Network& network, std::vector<std::string>* log) {
  auto count = [](const Network& n, OpKind kind) {
    size_t c = 0;
    for (size_t i = 0; i < n.num_nodes(); ++i) c += n.node(i).kind == kind;
    return c;
  };
  TO_ASSIGN_OR_RETURN(Network folded, fold_batch_norm(network));
  if (log && count(network, OpKind::kBatchNorm) != count(folded, OpKind::kBatchNorm))
    log->push_back(fmt::format("fold_batch_norm: {} batch norm layer(s) folded into convolutions",
                               count(network, OpKind::kBatchNorm) - count(folded, OpKind::kBatchNorm)));
  TO_ASSIGN_OR_RETURN(Network cast_free, fold_constant_casts(folded));
  if (log && count(folded, OpKind::kCast) != count(cast_free, OpKind::kCast))
    log->push_back(fmt::format("fold_constant_casts: {} cast(s) of constants folded",
                               count(folded, OpKind::kCast) - count(cast_free, OpKind::kCast)));
  TO_ASSIGN_OR_RETURN(Network attended, fuse_attention(cast_free));
  if (log && count(cast_free, OpKind::kAttention) != count(attended, OpKind::kAttention))
    log->push_back(fmt::format("fuse_attention: {} attention pattern(s) became attention layers",
                               count(attended, OpKind::kAttention) - count(cast_free, OpKind::kAttention)));
  TO_ASSIGN_OR_RETURN(Network quantized, fold_constant_quantize(attended));
  if (log && count(attended, OpKind::kQuantize) != count(quantized, OpKind::kQuantize))
    log->push_back(fmt::format("fold_constant_quantize: {} quantize layer(s) of constants folded",
                               count(attended, OpKind::kQuantize) - count(quantized, OpKind::kQuantize)));
  TO_ASSIGN_OR_RETURN(Network merged, merge_duplicate_quantize(quantized));
  if (log && count(quantized, OpKind::kQuantize) != count(merged, OpKind::kQuantize))
    log->push_back(fmt::format("merge_duplicate_quantize: {} quantize layer(s) of a tensor already quantized so merged",
                               count(quantized, OpKind::kQuantize) - count(merged, OpKind::kQuantize)));
  TO_ASSIGN_OR_RETURN(Network transposed, transpose_dequantized_weights(merged));
  const auto transposed_products = [](const Network& n) {
    size_t c = 0;
    for (size_t i = 0; i < n.num_nodes(); ++i)
      if (const auto* mm = n.node(i).attributes<MatMulAttributes>(); mm && mm->transpose_b) ++c;
    return c;
  };
  if (log && transposed_products(transposed) != transposed_products(merged))
    log->push_back(fmt::format("transpose_dequantized_weights: {} quantized weight(s) stored transposed",
                               transposed_products(transposed) - transposed_products(merged)));
  return remove_dead_layers(transposed);
}

}  // namespace tensoracle::passes
