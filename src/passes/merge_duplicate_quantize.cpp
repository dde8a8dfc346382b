// Quantize layers that compute the same tensor become one (passes.h).
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "core/errors.h"
#include "graph/attributes.h"
#include "passes/constant_values.h"
#include "passes/passes.h"
#include "passes/rebuild.h"

namespace tensoracle::passes {

namespace {

// Whether scales `a` and `b` hold the same values: the same tensor, or constants of one type and
// shape with the same bytes.
bool same_scale(const Network& net, Tensor a, Tensor b) {
  if (a.id == b.id) return true;
  const Node* ca = constant_producer(net, a);
  const Node* cb = constant_producer(net, b);
  if (!ca || !cb) return false;
  const ArrayView& va = ca->constant->view;
  const ArrayView& vb = cb->constant->view;
  return va.dtype == vb.dtype && va.shape == vb.shape && va.byte_size() == vb.byte_size() &&
         std::memcmp(va.data, vb.data, va.byte_size()) == 0;
}

}  // namespace

Result<Network> merge_duplicate_quantize(const Network& network) {
  // The first quantize layer seen of each (input, output type, axis); later ones with the same
  // scale values read its output.
  std::map<std::tuple<int64_t, DataType, int64_t>, std::vector<size_t>> seen;
  std::set<int64_t> outputs;  // a network output keeps its own layer (and its name)
  for (Tensor t : network.outputs()) outputs.insert(t.id);
  return rebuild(network, [&](Rebuild& r, size_t index) -> Result<bool> {
    const Node& node = network.node(index);
    if (node.kind != OpKind::kQuantize || outputs.count(node.outputs[0].id)) return false;
    TO_ASSIGN_OR_RETURN(const QuantizeAttributes* attrs, graph::attributes_of<QuantizeAttributes>(node));
    std::vector<size_t>& earlier = seen[{node.inputs[0].id, attrs->output_type, attrs->axis}];
    for (size_t first : earlier) {
      const Node& kept = network.node(first);
      if (!same_scale(network, kept.inputs[1], node.inputs[1])) continue;
      r.map(node.outputs[0], r.mapped(kept.outputs[0]));
      return true;
    }
    earlier.push_back(index);
    return false;
  });
}

}  // namespace tensoracle::passes
