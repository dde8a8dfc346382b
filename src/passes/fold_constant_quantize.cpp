// quantize(constant, constant scale) -> constant of the quantized type (passes.h).
#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "graph/attributes.h"
#include "passes/constant_values.h"
#include "passes/passes.h"
#include "passes/rebuild.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::passes {

namespace {

std::vector<float> as_floats(const ArrayView& view) {
  std::vector<float> out(static_cast<size_t>(view.element_count()));
  convert_elements(view.dtype, view.data, DataType::kFloat32, out.data(), out.size());
  return out;
}

}  // namespace

Result<Network> fold_constant_quantize(const Network& network) {
  return rebuild(network, [&](Rebuild& r, size_t index) -> Result<bool> {
    const Node& node = network.node(index);
    if (node.kind != OpKind::kQuantize) return false;
    const Node* data = constant_producer(network, node.inputs[0]);
    const Node* scale = constant_producer(network, node.inputs[1]);
    if (!data || !scale) return false;
    TO_ASSIGN_OR_RETURN(const QuantizeAttributes* attrs, graph::attributes_of<QuantizeAttributes>(node));
    const ArrayView& x = data->constant->view;
    const ArrayView& s = scale->constant->view;
    // The scale of element i: per-tensor, or scale[(i / inner) % channels] along the axis.
    int64_t channels = 1, inner = 1;
    if (s.shape.rank() == 1 && s.shape[0] != 1) {
      TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(node, attrs->axis, x.shape.rank()));
      channels = s.shape[0];
      for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape.rank(); ++d) inner *= x.shape[d];
    }
    const std::vector<float> values = as_floats(x), scales = as_floats(s);
    const DataType type = network.tensor(node.outputs[0]).desc.dtype;
    TO_ASSIGN_OR_RETURN(HostArray q, HostArray::zeros(type, x.shape));
    for (size_t i = 0; i < values.size(); ++i) {
      const size_t c = channels > 1 ? (i / static_cast<size_t>(std::max<int64_t>(inner, 1))) % static_cast<size_t>(channels) : 0;
      const float v = values[i] / scales[c];  // one fp32 division, as the layer (docs/quantization.md)
      if (type == DataType::kFloat8E4M3) {
        static_cast<uint8_t*>(q.data())[i] = float_to_fp8e4m3(v, Fp8Overflow::kSaturate);
      } else {
        const float rounded = std::isnan(v) ? 0.0f : std::nearbyint(v);  // ties to even
        static_cast<int8_t*>(q.data())[i] = static_cast<int8_t>(std::min(127.0f, std::max(-128.0f, rounded)));
      }
    }
    Tensor t = r.target().add_constant(std::move(q), node.name);
    TO_RETURN_IF_ERROR(r.target().status());
    r.target().set_tensor_name(t, network.tensor(node.outputs[0]).name);
    r.map(node.outputs[0], t);
    return true;
  });
}

}  // namespace tensoracle::passes
