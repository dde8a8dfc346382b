// The dynamic dims of an imported network, named. A graph input's dim "batch" is a symbol; a
// layer's output dim that provably equals an input dim (or a product of them) gets the same
// symbolic value, so that Shape of any tensor on the way gives values a Reshape can compare with
// its own input's dims. Dims with the same dim_param on graph inputs share a symbol (ONNX: the
// same name means the same size).
//
// Propagation is per layer kind and only claims what the layer's definition guarantees (a
// transposed dim moves, an elementwise output dim is its operands' dim when they all agree); a
// dim it cannot prove stays unnamed until Shape reads it, which names it "dim d of 'tensor'" --
// equal to itself only, so it is never wrongly taken for another dim.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontends/onnx/shape_value.h"
#include "tensoracle/network.h"

namespace tensoracle::onnx_import {

class DimSymbols {
 public:
  // Names the dynamic dims of the graph input `t`: dim_params[d] ("" when the model gives none).
  void name_input(Tensor t, const std::string& input, const std::vector<std::string>& dim_params, const Dims& shape);
  // The value of dim `d` of `t`: its constant size when static, its symbolic value when known,
  // else a new symbol for it.
  SymbolicDim dim(const Network& net, Tensor t, size_t d);
  // The symbolic value of dim `d` of `t` when known (nullopt for a static or unnamed dim).
  std::optional<SymbolicDim> known(Tensor t, size_t d) const;
  // Records that dynamic dim `d` of `t` equals `value` (the converter knows it, e.g. a Reshape's
  // inferred dim); a dim already known keeps its value.
  void set(Tensor t, size_t d, const SymbolicDim& value);
  // A tensor and dim whose size is `value` (the first recorded; graph inputs come first), so that
  // a layer can read that size at run time (an iota of it); nullopt when none is known.
  std::optional<std::pair<Tensor, size_t>> source(const SymbolicDim& value) const;
  // Names the output dims of the layers [first, net.num_nodes()) that their definition ties to
  // named input dims.
  void propagate(const Network& net, size_t first);
  // "dynamic dim 'batch' of input 'x'"; `symbol` is one this table made (in a SymbolicDim).
  const std::string& describe(int symbol) const { return descriptions_[static_cast<size_t>(symbol)]; }

 private:
  int add_symbol(std::string description);
  void propagate_node(const Network& net, const Node& node);

  std::vector<std::string> descriptions_;                       // by symbol
  std::map<std::string, int> by_param_;                         // dim_param -> symbol
  std::map<std::pair<uint32_t, size_t>, SymbolicDim> dims_;     // (tensor id, dim) -> value
};

}  // namespace tensoracle::onnx_import
