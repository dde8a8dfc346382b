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

}  // namespace tensoracle::passes
