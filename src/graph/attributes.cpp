#include "graph/attributes.h"

#include "graph/op_def.h"

namespace tensoracle::graph {

Status wrong_attributes(const Node& node, OpKind expected) {
  return Status(StatusCode::kInternal,
                fmt::format("layer '{}' ({}): read as {} but holds the attributes of {}", node.name,
                            op_kind_name(node.kind), op_kind_name(expected),
                            op_kind_name(op_kind_of_attributes(node.op_attributes))));
}

Result<int64_t> axis_of(const Node& node, int64_t axis, size_t rank) {
  auto a = normalize_axis(axis, rank);
  if (!a) return invalid_argument("layer '{}' ({}): axis {} is out of range for rank {}", node.name, op_kind_name(node.kind), axis, rank);
  return *a;
}

Result<std::vector<int64_t>> reduced_axes(const Node& node, const ReduceAttributes& attrs, size_t rank) {
  auto axes = reduce_axes(attrs.axes, rank);
  if (!axes.is_ok())
    return invalid_argument("layer '{}' ({}): {}", node.name, op_kind_name(node.kind), axes.status().message());
  return axes;
}

}  // namespace tensoracle::graph
