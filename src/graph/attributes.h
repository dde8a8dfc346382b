// Typed reads of a node's attributes for backends and passes: the node's attribute struct and
// its axes, checked. Definition-time inference has refused bad attributes and axes (ranks never
// change after definition), so an error here means a network changed behind the graph's back;
// it is reported, never dereferenced.
//
//   TO_ASSIGN_OR_RETURN(const SoftmaxAttributes* a, graph::attributes_of<SoftmaxAttributes>(node));
//   TO_ASSIGN_OR_RETURN(int64_t axis, graph::axis_of(node, a->axis, shape.rank()));
#pragma once

#include <vector>

#include "core/errors.h"
#include "tensoracle/network.h"

namespace tensoracle::graph {

// kInternal naming the layer when the node's op has another attribute struct.
Status wrong_attributes(const Node& node, OpKind expected);

template <typename T>
Result<const T*> attributes_of(const Node& node) {
  if (const T* a = node.attributes<T>()) return a;
  return wrong_attributes(node, op_kind_of<T>);
}

// `axis` (negative counts from the end) in [0, rank).
Result<int64_t> axis_of(const Node& node, int64_t axis, size_t rank);

// The dims a reduce layer reduces, in [0, rank), sorted: its axes, or every dim when they are
// empty.
Result<std::vector<int64_t>> reduced_axes(const Node& node, const ReduceAttributes& attrs, size_t rank);

}  // namespace tensoracle::graph
