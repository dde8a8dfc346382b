// Import-time evaluation: a node whose inputs are all constants (initializers, Constant nodes or
// values folded before it) is computed when the model is imported, so that the shape
// computations exporters emit (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape,
// Range, casts and arithmetic on shapes) become constants that the ops reading attributes from
// their inputs (a Reshape's shape, a Slice's starts, an Expand's shape) accept.
//
// The node is converted as usual; the layers its converter added are then run on the cpu
// reference (the executable specification of every layer, so a folded value is exactly what the
// engine would compute) and its outputs become constants. The layers stay behind unused and are
// dropped when the import ends (passes::remove_dead_layers).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "frontends/onnx/onnx_tensor.h"
#include "tensoracle/network.h"

namespace tensoracle::onnx_import {

// Folding stops above this many elements in one node's outputs: a folded value is held twice (as
// fp64 while it is computed, then in its type), and large constants computed from constants are
// rare outside shape computations (they then run in the engine as the model wrote them).
inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 22;

// The values of `outputs` (tensors of `net`) computed from the layers [first, net.num_nodes()),
// or nullopt when one of those layers reads a tensor that is neither a constant nor produced in
// that range (a network input, a computed tensor), when a shape is dynamic, or when the outputs
// exceed kMaxFoldedElements. Errors are the cpu reference's (a value out of range, ...).
Result<std::optional<std::vector<std::shared_ptr<const ConstantValue>>>> evaluate_constant_layers(
    const Network& net, size_t first, const std::vector<Tensor>& outputs);

}  // namespace tensoracle::onnx_import
