// Computing on shape values (shape_value.h): the ops exporters put between a Shape of a tensor
// with dynamic dims and the Reshape or Expand that reads the result -- Gather, Slice, Unsqueeze,
// Squeeze, Concat, Cast to int64, Identity, Reshape to 1-D, Shape, Mul/Div (and Add/Sub of
// constants), and Equal/Where as torch writes them to replace -1 in a size -- each on scalar or
// 1-D values; and the two consumers. A result whose elements are all constant becomes
// an ordinary constant, so every other op reads it as before.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// A shape value holds a shape, or a few dims of several: a constant operand larger than this is
// not one (and is not copied element by element).
constexpr size_t kMaxShapeElements = 64;

// "batch * 12" in the words of the symbols' descriptions.
std::string describe(NodeContext& ctx, const SymbolicDim& e) {
  std::vector<std::string> parts;
  if (e.factor != 1 || e.is_constant()) parts.push_back(std::to_string(e.factor));
  for (int s : e.symbols) parts.push_back("the " + ctx.symbols().describe(s));
  return fmt::format("{}", fmt::join(parts, " * "));
}

// Input i as a shape value: a shape value, or an integer constant of rank 0 or 1.
Result<ShapeValue> operand(NodeContext& ctx, int i) {
  if (const ShapeValue* value = ctx.shape_input(i)) return *value;
  TO_ASSIGN_OR_RETURN(const ConstantValue* constant, ctx.constant_input(i));
  const size_t rank = constant->view.shape.rank();
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> values, ctx.int_list_input(i));
  if (rank > 1 || values.size() > kMaxShapeElements)
    return ctx.refuse("input {} '{}' ({}) is not a shape: computing on it with a shape of dynamic dims is not supported",
                      i, ctx.node().input(i), constant->view.shape.to_string());
  ShapeValue value{rank == 0, {}};
  for (int64_t v : values) value.elements.push_back(SymbolicDim::constant(v));
  return value;
}

Result<ShapeValue> vector_operand(NodeContext& ctx, int i) {
  TO_ASSIGN_OR_RETURN(ShapeValue value, operand(ctx, i));
  if (value.scalar) return ctx.invalid("input {} '{}' is a scalar; a 1-D value is expected", i, ctx.node().input(i));
  return value;
}

// The axes of Squeeze/Unsqueeze on a shape value, which has rank 1 on one side and 0 on the other:
// the only axis is 0 (or -1).
Status check_single_axis(NodeContext& ctx, bool required) {
  if (!ctx.has_input(1)) {
    if (required) return ctx.invalid("input 1 (axes) is required");
    return Status::ok();
  }
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, ctx.int_list_input(1));
  if (axes.size() != 1 || (axes[0] != 0 && axes[0] != -1))
    return ctx.refuse("axes [{}] of a shape value are not supported (a shape value has rank 0 or 1)", fmt::join(axes, ","));
  return Status::ok();
}

Status convert_gather(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", 0));
  TO_ASSIGN_OR_RETURN(const ShapeValue data, vector_operand(ctx, 0));
  if (axis != 0 && axis != -1) return ctx.invalid("axis {} of the 1-D input 0", axis);
  TO_ASSIGN_OR_RETURN(const ConstantValue* indices_constant, ctx.constant_input(1));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> indices, ctx.int_list_input(1));
  if (indices_constant->view.shape.rank() > 1)
    return ctx.refuse("indices of rank {} into a shape value are not supported", indices_constant->view.shape.rank());
  const int64_t size = static_cast<int64_t>(data.elements.size());
  ShapeValue out{indices_constant->view.shape.rank() == 0, {}};
  for (int64_t index : indices) {
    if (index < -size || index >= size) return ctx.invalid("index {} is outside [{}, {})", index, -size, size);
    out.elements.push_back(data.elements[static_cast<size_t>(index < 0 ? index + size : index)]);
  }
  return ctx.set_shape_output(0, std::move(out));
}

Status convert_slice(NodeContext& ctx) {
  if (ctx.shape_input(0) == nullptr) return convert_slice_to_dim(ctx);  // a tensor sliced to a dynamic size
  TO_ASSIGN_OR_RETURN(const ShapeValue data, vector_operand(ctx, 0));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> starts, ctx.int_list_input(1));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> ends, ctx.int_list_input(2));
  std::vector<int64_t> axes{0}, steps{1};
  if (ctx.has_input(3)) {
    TO_ASSIGN_OR_RETURN(axes, ctx.int_list_input(3));
  }
  if (ctx.has_input(4)) {
    TO_ASSIGN_OR_RETURN(steps, ctx.int_list_input(4));
  }
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1)
    return ctx.invalid("a 1-D input takes one start, end, axis and step; given {}, {}, {} and {}", starts.size(), ends.size(),
                       axes.size(), steps.size());
  if (axes[0] != 0 && axes[0] != -1) return ctx.invalid("axis {} of the 1-D input 0", axes[0]);
  if (steps[0] == 0) return ctx.invalid("step 0");
  const SliceRange range = slice_range(starts[0], ends[0], steps[0], static_cast<int64_t>(data.elements.size()));
  ShapeValue out{false, {}};
  for (int64_t k = 0; k < range.size; ++k) out.elements.push_back(data.elements[static_cast<size_t>(range.start + k * steps[0])]);
  return ctx.set_shape_output(0, std::move(out));
}

Status convert_unsqueeze(NodeContext& ctx) {
  TO_RETURN_IF_ERROR(check_single_axis(ctx, true));
  TO_ASSIGN_OR_RETURN(ShapeValue value, operand(ctx, 0));
  if (!value.scalar) return ctx.refuse("Unsqueeze of a 1-D shape value (to rank 2) is not supported");
  value.scalar = false;
  return ctx.set_shape_output(0, std::move(value));
}

Status convert_squeeze(NodeContext& ctx) {
  TO_RETURN_IF_ERROR(check_single_axis(ctx, false));
  TO_ASSIGN_OR_RETURN(ShapeValue value, vector_operand(ctx, 0));
  if (value.elements.size() != 1) return ctx.invalid("input 0 has {} elements; Squeeze needs 1", value.elements.size());
  value.scalar = true;
  return ctx.set_shape_output(0, std::move(value));
}

Status convert_concat(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", 0));
  if (axis != 0 && axis != -1) return ctx.invalid("axis {} of 1-D inputs", axis);
  ShapeValue out{false, {}};
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    TO_ASSIGN_OR_RETURN(const ShapeValue part, vector_operand(ctx, i));
    out.elements.insert(out.elements.end(), part.elements.begin(), part.elements.end());
  }
  return ctx.set_shape_output(0, std::move(out));
}

Status convert_cast(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t to, ctx.attribute_int("to", 0));
  TO_ASSIGN_OR_RETURN(const int64_t saturate, ctx.attribute_int("saturate", 1));
  (void)saturate;  // it only concerns casts to float8
  if (to != onnx::TensorProto::INT64)
    return ctx.refuse("Cast of a shape value to {} is not supported (only to INT64)", onnx_type_name(static_cast<int32_t>(to)));
  TO_ASSIGN_OR_RETURN(ShapeValue value, operand(ctx, 0));
  return ctx.set_shape_output(0, std::move(value));
}

Status convert_identity(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(ShapeValue value, operand(ctx, 0));
  return ctx.set_shape_output(0, std::move(value));
}

// a op b per element, or nullopt when the result is not a product of dims.
using SymbolicOp = std::optional<SymbolicDim> (*)(const SymbolicDim&, const SymbolicDim&);

std::optional<SymbolicDim> add(const SymbolicDim& a, const SymbolicDim& b) {
  if (a.is_constant() && b.is_constant()) {
    const std::optional<int64_t> sum = checked_add(a.factor, b.factor);
    return sum ? std::optional<SymbolicDim>(SymbolicDim::constant(*sum)) : std::nullopt;
  }
  if (b == SymbolicDim::constant(0)) return a;
  if (a == SymbolicDim::constant(0)) return b;
  return std::nullopt;
}

std::optional<SymbolicDim> sub(const SymbolicDim& a, const SymbolicDim& b) {
  if (a.is_constant() && b.is_constant() && b.factor != std::numeric_limits<int64_t>::min()) return add(a, SymbolicDim::constant(-b.factor));
  if (b == SymbolicDim::constant(0)) return a;
  return std::nullopt;
}

// ONNX's integer Div truncates; a symbolic quotient must be exact (dims are never negative, so an
// exact quotient is also the truncated one).
std::optional<SymbolicDim> div(const SymbolicDim& a, const SymbolicDim& b) {
  if (a.is_constant() && b.is_constant()) {
    if (b.factor == 0 || (a.factor == std::numeric_limits<int64_t>::min() && b.factor == -1)) return std::nullopt;
    return SymbolicDim::constant(a.factor / b.factor);
  }
  return divide(a, b);
}

template <SymbolicOp op>
Status convert_binary(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const ShapeValue a, operand(ctx, 0));
  TO_ASSIGN_OR_RETURN(const ShapeValue b, operand(ctx, 1));
  const size_t na = a.elements.size(), nb = b.elements.size();
  if (na != nb && na != 1 && nb != 1) return ctx.invalid("inputs of {} and {} elements do not broadcast", na, nb);
  ShapeValue out{a.scalar && b.scalar, {}};
  for (size_t k = 0; k < (na == 1 ? nb : na); ++k) {
    const SymbolicDim& x = a.elements[na == 1 ? 0 : k];
    const SymbolicDim& y = b.elements[nb == 1 ? 0 : k];
    const std::optional<SymbolicDim> r = op(x, y);
    if (!r)
      return ctx.refuse("{} of {} and {} is not a product of dims the importer tracks; a shape computed so is not "
                        "supported",
                        ctx.node().op_type(), describe(ctx, x), describe(ctx, y));
    out.elements.push_back(*r);
  }
  return ctx.set_shape_output(0, std::move(out));
}

// a == b, or nullopt when it depends on a dim's value. A dim is never negative, so a positive
// product of dims differs from a negative constant: torch's "is this element -1" checks
// (Equal(shape, -1) -> Where) are known at import.
std::optional<bool> equal(const SymbolicDim& a, const SymbolicDim& b) {
  if (a == b) return true;
  if (a.is_constant() && b.is_constant()) return false;
  const SymbolicDim& constant = a.is_constant() ? a : b;
  const SymbolicDim& product = a.is_constant() ? b : a;
  if (constant.is_constant() && constant.factor < 0 && product.factor > 0) return false;
  return std::nullopt;
}

// Equal of shape values: a bool constant.
Status convert_equal(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const ShapeValue a, operand(ctx, 0));
  TO_ASSIGN_OR_RETURN(const ShapeValue b, operand(ctx, 1));
  const size_t na = a.elements.size(), nb = b.elements.size();
  if (na != nb && na != 1 && nb != 1) return ctx.invalid("inputs of {} and {} elements do not broadcast", na, nb);
  const size_t n = na == 1 ? nb : na;
  const bool scalar = a.scalar && b.scalar;
  TO_ASSIGN_OR_RETURN(HostArray out, HostArray::zeros(DataType::kBool, scalar ? Dims{} : Dims{static_cast<int64_t>(n)}));
  for (size_t k = 0; k < n; ++k) {
    const SymbolicDim& x = a.elements[na == 1 ? 0 : k];
    const SymbolicDim& y = b.elements[nb == 1 ? 0 : k];
    const std::optional<bool> same = equal(x, y);
    if (!same)
      return ctx.refuse("whether {} equals {} depends on the dims' values, known only at run time; not supported",
                        describe(ctx, x), describe(ctx, y));
    out.data_as<uint8_t>()[k] = *same ? 1 : 0;
  }
  return ctx.set_constant_output(0, owned_constant(std::move(out)));
}

// Where with a condition known at import picks each element from the shape value or constant
// operands.
Status convert_where(NodeContext& ctx) {
  const ShapeValue* condition_dependence = ctx.shape_input(0);
  if (condition_dependence != nullptr) return ctx.invalid("input 0 (condition) is an int64 shape value; bool is expected");
  TO_ASSIGN_OR_RETURN(const ConstantValue* condition, ctx.constant_input(0));
  if (condition->view.dtype != DataType::kBool)
    return ctx.invalid("input 0 (condition) is {}; bool is expected", data_type_name(condition->view.dtype));
  if (condition->view.shape.rank() > 1 || condition->view.element_count() > static_cast<int64_t>(kMaxShapeElements))
    return ctx.refuse("a condition of shape {} on a shape value is not supported", condition->view.shape.to_string());
  const auto* picks = static_cast<const uint8_t*>(condition->view.data);
  const size_t nc = static_cast<size_t>(condition->view.element_count());
  TO_ASSIGN_OR_RETURN(const ShapeValue a, operand(ctx, 1));
  TO_ASSIGN_OR_RETURN(const ShapeValue b, operand(ctx, 2));
  const size_t na = a.elements.size(), nb = b.elements.size();
  const size_t n = std::max({nc, na, nb});
  for (size_t m : {nc, na, nb})
    if (m != n && m != 1) return ctx.invalid("inputs of {}, {} and {} elements do not broadcast", nc, na, nb);
  ShapeValue out{condition->view.shape.rank() == 0 && a.scalar && b.scalar, {}};
  for (size_t k = 0; k < n; ++k)
    out.elements.push_back(picks[nc == 1 ? 0 : k] ? a.elements[na == 1 ? 0 : k] : b.elements[nb == 1 ? 0 : k]);
  return ctx.set_shape_output(0, std::move(out));
}

// A Reshape of a shape value keeps its elements: to 1-D ([-1] or [n]) or, with one element, to a
// scalar ([]).
Status convert_reshape(NodeContext& ctx) {
  // A tensor reshaped to a shape value is the ordinary Reshape's (reshape_to_shape_value).
  if (ctx.shape_input(0) == nullptr) return find_converter("Reshape")(ctx);
  TO_ASSIGN_OR_RETURN(const int64_t allowzero, ctx.attribute_int("allowzero", 0));
  (void)allowzero;  // a 0 in a 1-D target is refused below either way
  TO_ASSIGN_OR_RETURN(ShapeValue value, operand(ctx, 0));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> target, ctx.int_list_input(1));
  const int64_t n = static_cast<int64_t>(value.elements.size());
  if (target.empty() && n == 1) {
    value.scalar = true;
  } else if (target.size() == 1 && (target[0] == -1 || target[0] == n)) {
    value.scalar = false;
  } else {
    return ctx.refuse("a Reshape of a shape value of {} element(s) to [{}] is not supported (only to 1-D, or a scalar)",
                      n, fmt::join(target, ","));
  }
  return ctx.set_shape_output(0, std::move(value));
}

// The Shape of a shape value is a constant: [n], or [] for a scalar.
Status convert_shape_of(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const ShapeValue value, operand(ctx, 0));
  const int64_t rank = value.scalar ? 0 : 1;
  TO_ASSIGN_OR_RETURN(int64_t start, ctx.attribute_int("start", 0));
  TO_ASSIGN_OR_RETURN(int64_t end, ctx.attribute_int("end", rank));
  if (start < 0) start = std::max<int64_t>(0, start + rank);
  if (end < 0) end = std::max<int64_t>(0, end + rank);
  start = std::min(start, rank);
  end = std::max(start, std::min(end, rank));
  ShapeValue out{false, {}};
  if (start < end) out.elements.push_back(SymbolicDim::constant(static_cast<int64_t>(value.elements.size())));
  return ctx.set_shape_output(0, std::move(out));
}

const std::vector<OpConverter>& converters() {
  static const std::vector<OpConverter> table = {
      {"Gather", &convert_gather},     {"Slice", &convert_slice},     {"Unsqueeze", &convert_unsqueeze},
      {"Squeeze", &convert_squeeze},   {"Concat", &convert_concat},   {"Cast", &convert_cast},
      {"Identity", &convert_identity}, {"Mul", &convert_binary<multiply>}, {"Div", &convert_binary<div>},
      {"Add", &convert_binary<add>},   {"Sub", &convert_binary<sub>},       {"Equal", &convert_equal},
      {"Where", &convert_where},       {"Reshape", &convert_reshape},      {"Shape", &convert_shape_of},
      {"Range", &convert_range_to_dim},
  };
  return table;
}

}  // namespace

ConvertFn find_shape_value_converter(const std::string& op_type) {
  for (const OpConverter& c : converters())
    if (op_type == c.op_type) return c.convert;
  return nullptr;
}

Status reshape_to_shape_value(NodeContext& ctx, Tensor x, const ShapeValue& target) {
  if (target.scalar) return ctx.invalid("input 1 (shape) is a scalar; a 1-D value is expected");
  const size_t rank = ctx.desc(x).shape.rank();
  std::vector<int64_t> shape;
  std::optional<size_t> inferred;  // the element left to the layer to infer (-1)
  for (size_t j = 0; j < target.elements.size(); ++j) {
    const SymbolicDim& e = target.elements[j];
    if (e.is_constant() && e.factor != -1) {
      shape.push_back(e.factor);
    } else if (!e.is_constant() && j < rank && ctx.symbols().dim(ctx.net(), x, j) == e) {
      shape.push_back(0);
    } else if (!inferred) {
      shape.push_back(-1);
      inferred = j;
    } else {
      return ctx.refuse("shape elements {} and {} ({} and {}) are not the input's dims at their places, and a reshape "
                        "infers only one dim (shape depends on the {})",
                        *inferred, j, describe(ctx, target.elements[*inferred]), describe(ctx, e),
                        ctx.symbols().describe(target.first_symbol()));
    }
  }
  const Tensor y = ctx.net().reshape(x, ReshapeAttributes().set_shape(shape).set_name(ctx.layer_name()));
  TO_RETURN_IF_ERROR(ctx.network_status());
  // The inferred dim is the element's value, which a later Shape of y reads.
  if (inferred && !target.elements[*inferred].is_constant()) ctx.symbols().set(y, *inferred, target.elements[*inferred]);
  return ctx.set_output(0, y);
}

Result<std::vector<int64_t>> expand_target(NodeContext& ctx, Tensor x, const ShapeValue& target,
                                           std::map<size_t, SymbolicDim>& to_dynamic) {
  if (target.scalar) return ctx.invalid("input 1 (shape) is a scalar; a 1-D value is expected");
  const int64_t rank = static_cast<int64_t>(ctx.desc(x).shape.rank());
  const int64_t lead = static_cast<int64_t>(target.elements.size()) - rank;  // right-aligned
  std::vector<int64_t> out;
  for (size_t k = 0; k < target.elements.size(); ++k) {
    const SymbolicDim& e = target.elements[k];
    const int64_t d = static_cast<int64_t>(k) - lead;
    if (e.is_constant()) {
      out.push_back(e.factor);
    } else if (d >= 0 && ctx.symbols().dim(ctx.net(), x, static_cast<size_t>(d)) == e) {
      out.push_back(1);
    } else if (d < 0 || ctx.desc(x).shape[static_cast<size_t>(d)] == 1) {
      out.push_back(1);  // broadcast by the caller, a dim of 1 to the dynamic size
      to_dynamic[k] = e;
    } else {
      return ctx.refuse("shape element {} is {}, which the input's dim at its place is not known to equal; broadcasting "
                        "to it is not supported (shape depends on the {})",
                        k, describe(ctx, e), ctx.symbols().describe(e.symbols.front()));
    }
  }
  return out;
}

}  // namespace tensoracle::onnx_import
