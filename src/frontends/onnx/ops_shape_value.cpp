// Computing on shape values (shape_value.h): the ops exporters put between a Shape of a tensor
// with dynamic dims and the Reshape or Expand that reads the result -- Gather, Slice, Unsqueeze,
// Squeeze, Concat, Cast to int64, Identity, and Mul/Div (and Add/Sub of constants) -- each on
// scalar or 1-D values; and the two consumers. A result whose elements are all constant becomes
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

const std::vector<OpConverter>& converters() {
  static const std::vector<OpConverter> table = {
      {"Gather", &convert_gather},     {"Slice", &convert_slice},     {"Unsqueeze", &convert_unsqueeze},
      {"Squeeze", &convert_squeeze},   {"Concat", &convert_concat},   {"Cast", &convert_cast},
      {"Identity", &convert_identity}, {"Mul", &convert_binary<multiply>}, {"Div", &convert_binary<div>},
      {"Add", &convert_binary<add>},   {"Sub", &convert_binary<sub>},
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

Result<std::vector<int64_t>> expand_target(NodeContext& ctx, Tensor x, const ShapeValue& target) {
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
    } else {
      return ctx.refuse("shape element {} is {}, which the input's dim at its place is not known to equal; broadcasting "
                        "to it is not supported (shape depends on the {})",
                        k, describe(ctx, e), ctx.symbols().describe(e.symbols.front()));
    }
  }
  return out;
}

}  // namespace tensoracle::onnx_import
