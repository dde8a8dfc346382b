// GatherElements and GatherND as one gather of the flattened data: each index tuple becomes the
// flat offset sum(index_d * stride_d) in int64 (exact), and a gather by those offsets reads the
// same elements. Each index component first goes through a gather of the table [0, 1, ..., n-1]
// of its dim, which maps a negative index to index + n and refuses one outside [-n, n) at run
// time just as ONNX requires; the offsets therefore never wrap into a neighbouring row.
// GatherElements needs its strides at import: the data's dims static (a dynamic one is refused
// naming it), and the indices static on every dim but the gathered one, except dims of size 1.
// GatherND reads the dynamic dims it indexes at run time (an iota of the dim is its table, and
// the sum of its ones its size in a stride).
#include <algorithm>
#include <numeric>

#include "frontends/onnx/fold.h"
#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// A table of `n` int64 values (the offsets of a dim of `n`) is made at import, so `n` -- a dim the
// model declares, untrusted -- is bounded before anything is allocated: by the importer's limit on
// the values it computes itself (kMaxFoldedElements, 32 MiB of int64). A larger dim is refused.
Status check_table_size(NodeContext& ctx, int64_t n, const std::string& what) {
  if (n > kMaxFoldedElements)
    return ctx.refuse("{} has size {}: its table of offsets, made at import, would hold {} int64 values, over the {} "
                      "this importer computes",
                      what, n, n, kMaxFoldedElements);
  return Status::ok();
}

Result<Tensor> int64_array(NodeContext& ctx, const Dims& shape, const std::vector<int64_t>& values, const std::string& name) {
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(DataType::kInt64, shape));
  std::copy(values.begin(), values.end(), array.data_as<int64_t>());
  const Tensor t = ctx.net().add_constant(std::move(array), name);
  TO_RETURN_IF_ERROR(ctx.network_status());
  return t;
}

Status require_static(NodeContext& ctx, const Dims& shape, const char* what) {
  for (size_t d = 0; d < shape.rank(); ++d)
    if (shape[d] < 0)
      return ctx.refuse("dim {} of {} is dynamic; the flat offsets need its size at import (it must be static)", d, what);
  return Status::ok();
}

// `index` (any integer type, any shape) as int64 in [0, n): negative ones plus n, through a
// gather of [0, n) (which refuses an index outside [-n, n) at run time). Times `stride`.
// `what` names the dim of `n` in errors.
Result<Tensor> wrapped_offset(NodeContext& ctx, Tensor index, int64_t n, int64_t stride, const std::string& what,
                              const std::string& name) {
  TO_RETURN_IF_ERROR(check_table_size(ctx, n, what));
  std::vector<int64_t> table(static_cast<size_t>(n));
  std::iota(table.begin(), table.end(), int64_t{0});
  for (int64_t& v : table) v *= stride;  // no overflow: v * stride < the data's element count
  TO_ASSIGN_OR_RETURN(const Tensor t, int64_array(ctx, Dims{n}, table, name + "/table"));
  const Tensor y = ctx.net().gather(t, index, GatherAttributes().set_name(name));
  TO_RETURN_IF_ERROR(ctx.network_status());
  return y;
}

Result<Tensor> add(NodeContext& ctx, Tensor a, Tensor b, const std::string& name) {
  const Tensor y = ctx.net().elementwise(a, b, ElementwiseAttributes().set_op(ElementwiseOp::kAdd).set_name(name));
  TO_RETURN_IF_ERROR(ctx.network_status());
  return y;
}

Result<Tensor> multiply(NodeContext& ctx, Tensor a, Tensor b, const std::string& name) {
  const Tensor y = ctx.net().elementwise(a, b, ElementwiseAttributes().set_op(ElementwiseOp::kMul).set_name(name));
  TO_RETURN_IF_ERROR(ctx.network_status());
  return y;
}

// `data` flattened to [N] (static dims).
Result<Tensor> flattened(NodeContext& ctx, Tensor data, const std::string& name) {
  const Tensor y = ctx.net().reshape(data, ReshapeAttributes().set_shape({-1}).set_name(name));
  TO_RETURN_IF_ERROR(ctx.network_status());
  return y;
}

std::vector<int64_t> strides_of(const Dims& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  for (size_t d = shape.rank(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

Status convert_gather_elements(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor data, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor indices, ctx.input(1));
  const Dims shape = ctx.desc(data).shape;
  const Dims index_shape = ctx.desc(indices).shape;
  const int64_t rank = static_cast<int64_t>(shape.rank());
  TO_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.attribute_int("axis", 0));
  if (rank == 0) return ctx.invalid("input 0 is a scalar; GatherElements needs rank >= 1");
  TO_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, axis_attr, rank, "axis"));
  if (index_shape.rank() != shape.rank())
    return ctx.invalid("indices {} and data {} have different ranks", index_shape.to_string(), shape.to_string());
  TO_RETURN_IF_ERROR(require_static(ctx, shape, "input 0 (data)"));
  const std::vector<int64_t> strides = strides_of(shape);
  const std::string& name = ctx.layer_name();
  TO_ASSIGN_OR_RETURN(Tensor offsets, wrapped_offset(ctx, indices, shape[static_cast<size_t>(axis)],
                                                     strides[static_cast<size_t>(axis)],
                                                     fmt::format("dim {} of input 0 (data)", axis), name + "/axis"));
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = index_shape[static_cast<size_t>(d)];
    if (d == axis || n == 1) continue;  // a dim of 1 reads coordinate 0: offset 0
    if (n < 0)
      return ctx.refuse("dim {} of input 1 (indices) is dynamic; only the gathered axis {} may be (the offsets of "
                        "the other dims are constants)",
                        d, axis);
    if (n > shape[static_cast<size_t>(d)])
      return ctx.invalid("dim {} of indices {} exceeds the data's {}", d, index_shape.to_string(), shape.to_string());
    TO_RETURN_IF_ERROR(check_table_size(ctx, n, fmt::format("dim {} of input 1 (indices)", d)));
    std::vector<int64_t> place(static_cast<size_t>(rank), 1);
    place[static_cast<size_t>(d)] = n;
    std::vector<int64_t> coordinate(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) coordinate[static_cast<size_t>(i)] = i * strides[static_cast<size_t>(d)];
    TO_ASSIGN_OR_RETURN(const Tensor c, int64_array(ctx, Dims(place), coordinate, fmt::format("{}/dim{}", name, d)));
    TO_ASSIGN_OR_RETURN(offsets, add(ctx, offsets, c, fmt::format("{}/offset{}", name, d)));
  }
  TO_ASSIGN_OR_RETURN(const Tensor flat, flattened(ctx, data, name + "/flat"));
  return ctx.set_output(0, ctx.net().gather(flat, offsets, GatherAttributes().set_name(name)));
}

// Component j of GatherND's index tuples (into the first `k` dims of `data`) as its part of the
// flat offset: wrapped by a gather of [0, D_j) (a constant, or an iota of a dynamic dim) and
// multiplied by the stride D_j+1 * ... * D_k-1, whose dynamic dims are read at run time.
Result<Tensor> strided_offset(NodeContext& ctx, Tensor data, int64_t j, int64_t k, Tensor component, const std::string& name) {
  const Dims shape = ctx.desc(data).shape;
  int64_t static_stride = 1;
  std::vector<size_t> dynamic;
  for (int64_t i = j + 1; i < k; ++i) {
    if (shape[static_cast<size_t>(i)] < 0) dynamic.push_back(static_cast<size_t>(i));
    else static_stride *= shape[static_cast<size_t>(i)];
  }
  const int64_t n = shape[static_cast<size_t>(j)];
  Tensor offset;
  if (n >= 0) {
    TO_ASSIGN_OR_RETURN(offset, wrapped_offset(ctx, component, n, static_stride, fmt::format("dim {} of input 0 (data)", j), name));
  } else {
    TO_ASSIGN_OR_RETURN(const Tensor table, iota_along(ctx, data, static_cast<size_t>(j), name + "/table"));
    offset = ctx.net().gather(table, component, GatherAttributes().set_name(name));
    TO_RETURN_IF_ERROR(ctx.network_status());
    if (static_stride != 1) {
      TO_ASSIGN_OR_RETURN(const Tensor stride, int64_array(ctx, Dims{}, {static_stride}, name + "/stride"));
      TO_ASSIGN_OR_RETURN(offset, multiply(ctx, offset, stride, name + "/scaled"));
    }
  }
  for (size_t i : dynamic) {
    TO_ASSIGN_OR_RETURN(const Tensor size, size_value(ctx, data, i, fmt::format("{}/dim{}", name, i)));
    TO_ASSIGN_OR_RETURN(offset, multiply(ctx, offset, size, fmt::format("{}/times_dim{}", name, i)));
  }
  return offset;
}

// A scalar int64 constant (a gather by it drops the axis).
Result<Tensor> int64_scalar(NodeContext& ctx, int64_t value, const std::string& name) {
  return int64_array(ctx, Dims{}, {value}, name);
}

Status convert_gather_nd(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t batch_dims, ctx.attribute_int("batch_dims", 0));
  if (batch_dims != 0) return ctx.refuse("batch_dims {} is not supported (only 0)", batch_dims);
  TO_ASSIGN_OR_RETURN(const Tensor data, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor indices, ctx.input(1));
  const Dims shape = ctx.desc(data).shape;
  const Dims index_shape = ctx.desc(indices).shape;
  if (shape.rank() == 0 || index_shape.rank() == 0)
    return ctx.invalid("data {} and indices {} must both have rank >= 1", shape.to_string(), index_shape.to_string());
  const int64_t k = index_shape[index_shape.rank() - 1];
  if (k < 0) return ctx.refuse("the last dim of input 1 (indices), the length of an index tuple, is dynamic");
  if (k == 0 || k > static_cast<int64_t>(shape.rank()))
    return ctx.invalid("index tuples of {} elements into data of rank {}", k, shape.rank());
  // Only the indexed dims enter the offsets; the rest are copied whole by the gather.
  const Dims indexed(std::vector<int64_t>(shape.values().begin(), shape.values().begin() + k));
  const std::string& name = ctx.layer_name();
  const int64_t last = static_cast<int64_t>(index_shape.rank()) - 1;
  Tensor offsets;
  for (int64_t j = 0; j < k; ++j) {
    TO_ASSIGN_OR_RETURN(const Tensor at, int64_scalar(ctx, j, fmt::format("{}/component{}/index", name, j)));
    const Tensor component =
        ctx.net().gather(indices, at, GatherAttributes().set_axis(last).set_name(fmt::format("{}/component{}", name, j)));
    TO_RETURN_IF_ERROR(ctx.network_status());
    TO_ASSIGN_OR_RETURN(const Tensor offset, strided_offset(ctx, data, j, k, component, fmt::format("{}/offset{}", name, j)));
    if (j == 0) {
      offsets = offset;
    } else {
      TO_ASSIGN_OR_RETURN(offsets, add(ctx, offsets, offset, fmt::format("{}/sum{}", name, j)));
    }
  }
  Tensor rows = data;
  if (k > 1) {
    // [D0 * ... * Dk-1, Dk, ...]: the trailing dims (dynamic ones included) keep their order.
    const bool indexed_static = std::all_of(indexed.values().begin(), indexed.values().end(), [](int64_t d) { return d >= 0; });
    std::vector<int64_t> out{indexed_static ? std::accumulate(indexed.values().begin(), indexed.values().end(), int64_t{1}, std::multiplies<>()) : -1};
    std::vector<int64_t> from{-1};
    for (size_t d = static_cast<size_t>(k); d < shape.rank(); ++d) {
      out.push_back(shape[d]);
      from.push_back(static_cast<int64_t>(d));
    }
    TO_ASSIGN_OR_RETURN(rows, reshape_moving(ctx, data, out, from, name + "/rows"));
  }
  return ctx.set_output(0, ctx.net().gather(rows, offsets, GatherAttributes().set_name(name)));
}

}  // namespace

const std::vector<OpConverter>& gather_converters() {
  static const std::vector<OpConverter> table = {
      {"GatherElements", &convert_gather_elements},
      {"GatherND", &convert_gather_nd},
  };
  return table;
}

}  // namespace tensoracle::onnx_import
