// Data movement and constants: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Slice,
// Pad, Gather, Shape, Constant.
#include <algorithm>
#include <limits>

#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

Status convert_reshape(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t allow_zero, ctx.attribute_int("allowzero", 0));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  if (const ShapeValue* target = ctx.shape_input(1)) {
    if (allow_zero != 0 && std::count(target->elements.begin(), target->elements.end(), SymbolicDim::constant(0)) > 0)
      return ctx.refuse("allowzero 1 with a 0 in the shape is not supported");
    return reshape_to_shape_value(ctx, x, *target);
  }
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> shape, ctx.int_list_input(1));
  if (allow_zero != 0 && std::count(shape.begin(), shape.end(), 0) > 0)
    return ctx.refuse("allowzero 1 with a 0 in the shape [{}] is not supported", fmt::join(shape, ","));
  return ctx.set_output(0, ctx.net().reshape(x, ReshapeAttributes().set_shape(shape).set_name(ctx.layer_name())));
}

Status convert_flatten(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const Dims shape = ctx.desc(x).shape;
  const int64_t rank = static_cast<int64_t>(shape.rank());
  TO_ASSIGN_OR_RETURN(int64_t axis, ctx.attribute_int("axis", 1));
  if (axis < -rank || axis > rank) return ctx.invalid("axis {} is outside [{}, {}]", axis, -rank, rank);
  if (axis < 0) axis += rank;
  int64_t parts[2] = {1, 1};
  bool dynamic[2] = {false, false};
  for (int64_t i = 0; i < rank; ++i) {
    const int side = i < axis ? 0 : 1;
    if (shape[static_cast<size_t>(i)] < 0) {
      dynamic[side] = true;
    } else {
      const auto product = checked_mul(parts[side], shape[static_cast<size_t>(i)]);
      if (!product) return ctx.invalid("the element count of {} overflows", shape.to_string());
      parts[side] = *product;
    }
  }
  if (dynamic[0] && dynamic[1]) return ctx.refuse("dynamic dims on both sides of axis {} are not supported", axis);
  std::vector<int64_t> out{dynamic[0] ? -1 : parts[0], dynamic[1] ? -1 : parts[1]};
  // A dynamic leading part of exactly the first dim keeps it; otherwise one side is inferred.
  if (dynamic[0] && axis == 1) out[0] = 0;
  return ctx.set_output(0, ctx.net().reshape(x, ReshapeAttributes().set_shape(out).set_name(ctx.layer_name())));
}

Status convert_squeeze(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const Dims shape = ctx.desc(x).shape;
  const int64_t rank = static_cast<int64_t>(shape.rank());
  std::vector<bool> squeezed(static_cast<size_t>(rank), false);
  if (ctx.has_input(1)) {
    TO_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, ctx.int_list_input(1));
    for (int64_t a : axes) {
      TO_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, a, rank, "axis"));
      const int64_t dim = shape[static_cast<size_t>(axis)];
      if (dim != 1 && dim != -1) return ctx.invalid("axis {} has size {}, not 1", a, dim);
      squeezed[static_cast<size_t>(axis)] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) {
      if (shape[static_cast<size_t>(i)] < 0) return ctx.refuse("Squeeze without axes of a dynamic dim is not supported");
      squeezed[static_cast<size_t>(i)] = shape[static_cast<size_t>(i)] == 1;
    }
  }
  std::vector<int64_t> out, from;
  for (int64_t i = 0; i < rank; ++i) {
    if (squeezed[static_cast<size_t>(i)]) continue;
    out.push_back(shape[static_cast<size_t>(i)]);
    from.push_back(i);
  }
  TO_ASSIGN_OR_RETURN(const Tensor y, reshape_moving(ctx, x, out, from, ctx.layer_name()));
  return ctx.set_output(0, y);
}

Status convert_unsqueeze(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, ctx.int_list_input(1));
  const Dims shape = ctx.desc(x).shape;
  const int64_t out_rank = static_cast<int64_t>(shape.rank() + axes.size());
  if (static_cast<size_t>(out_rank) > Dims::kMaxRank) return ctx.invalid("the output rank {} exceeds {}", out_rank, Dims::kMaxRank);
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) {
    TO_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, a, out_rank, "axis"));
    if (inserted[static_cast<size_t>(axis)]) return ctx.invalid("axis {} is given twice", a);
    inserted[static_cast<size_t>(axis)] = true;
  }
  std::vector<int64_t> out, from;
  int64_t next = 0;
  for (int64_t j = 0; j < out_rank; ++j) {
    if (inserted[static_cast<size_t>(j)]) {
      out.push_back(1);
      from.push_back(-1);
    } else {
      out.push_back(shape[static_cast<size_t>(next)]);
      from.push_back(next++);
    }
  }
  TO_ASSIGN_OR_RETURN(const Tensor y, reshape_moving(ctx, x, out, from, ctx.layer_name()));
  return ctx.set_output(0, y);
}

Status convert_transpose(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ctx.attribute_ints("perm"));
  if (perm.empty()) {
    const int64_t rank = static_cast<int64_t>(ctx.desc(x).shape.rank());
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  return ctx.set_output(0, ctx.net().transpose(x, TransposeAttributes().set_perm(perm).set_name(ctx.layer_name())));
}

Status convert_concat(NodeContext& ctx) {
  if (!ctx.has_attribute("axis")) return ctx.invalid("attribute 'axis' is required");
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", 0));
  std::vector<Tensor> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    TO_ASSIGN_OR_RETURN(const Tensor t, ctx.input(i));
    inputs.push_back(t);
  }
  return ctx.set_output(0, ctx.net().concat(inputs, ConcatAttributes().set_axis(axis).set_name(ctx.layer_name())));
}

Status convert_slice(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> starts, ctx.int_list_input(1));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> ends, ctx.int_list_input(2));
  const Dims shape = ctx.desc(x).shape;
  const int64_t rank = static_cast<int64_t>(shape.rank());
  std::vector<int64_t> axes, steps;
  if (ctx.has_input(3)) {
    TO_ASSIGN_OR_RETURN(axes, ctx.int_list_input(3));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (ctx.has_input(4)) {
    TO_ASSIGN_OR_RETURN(steps, ctx.int_list_input(4));
  } else {
    steps.assign(starts.size(), 1);
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.invalid("starts, ends, axes and steps have {}, {}, {} and {} values", starts.size(), ends.size(), axes.size(),
                       steps.size());
  SliceAttributes attrs;
  attrs.start.assign(static_cast<size_t>(rank), 0);
  attrs.stride.assign(static_cast<size_t>(rank), 1);
  attrs.size = shape.values();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    TO_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, axes[k], rank, "axis"));
    if (seen[static_cast<size_t>(axis)]) return ctx.invalid("axis {} is given twice", axes[k]);
    seen[static_cast<size_t>(axis)] = true;
    const int64_t dim = shape[static_cast<size_t>(axis)];
    if (dim < 0) return ctx.refuse("slicing the dynamic dim {} is not supported", axis);
    const int64_t step = steps[k];
    if (step == 0) return ctx.invalid("step 0 on axis {}", axes[k]);
    const SliceRange range = slice_range(starts[k], ends[k], step, dim);
    attrs.start[static_cast<size_t>(axis)] = range.start;
    attrs.size[static_cast<size_t>(axis)] = range.size;
    attrs.stride[static_cast<size_t>(axis)] = step;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (!seen[static_cast<size_t>(i)] && shape[static_cast<size_t>(i)] < 0)
      return ctx.refuse("Slice of a tensor with the dynamic dim {} is not supported", i);
  return ctx.set_output(0, ctx.net().slice(x, attrs.set_name(ctx.layer_name())));
}

Status convert_pad(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const std::string mode, ctx.attribute_string("mode", "constant"));
  PadAttributes attrs;
  if (mode == "constant") {
    attrs.mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    attrs.mode = PadMode::kReflect;
  } else if (mode == "edge") {
    attrs.mode = PadMode::kReplicate;
  } else if (mode == "wrap") {
    attrs.mode = PadMode::kCircular;
  } else {
    return ctx.invalid("mode '{}' is not one of constant, reflect, edge, wrap", mode);
  }
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const int64_t rank = static_cast<int64_t>(ctx.desc(x).shape.rank());
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, ctx.int_list_input(1));
  if (ctx.has_input(2)) {
    TO_ASSIGN_OR_RETURN(attrs.value, ctx.scalar_input(2));
  }
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    TO_ASSIGN_OR_RETURN(axes, ctx.int_list_input(3));
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) return ctx.invalid("pads has {} values for {} axes", pads.size(), axes.size());
  attrs.pre.assign(static_cast<size_t>(rank), 0);
  attrs.post.assign(static_cast<size_t>(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    TO_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, axes[k], rank, "axis"));
    const int64_t pre = pads[k];
    const int64_t post = pads[k + axes.size()];
    if (pre < 0 || post < 0) return ctx.refuse("negative pads (cropping) on axis {} are not supported", axes[k]);
    attrs.pre[static_cast<size_t>(axis)] = pre;
    attrs.post[static_cast<size_t>(axis)] = post;
  }
  return ctx.set_output(0, ctx.net().pad(x, attrs.set_name(ctx.layer_name())));
}

Status convert_gather(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", 0));
  TO_ASSIGN_OR_RETURN(const Tensor data, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor indices, ctx.input(1));
  return ctx.set_output(0, ctx.net().gather(data, indices, GatherAttributes().set_axis(axis).set_name(ctx.layer_name())));
}

// Shape's values are the dims' symbolic values (dim_symbols.h): constants for static dims, so the
// Shape of a static tensor is a constant.
Status convert_shape(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const int64_t rank = static_cast<int64_t>(ctx.desc(x).shape.rank());
  TO_ASSIGN_OR_RETURN(int64_t start, ctx.attribute_int("start", 0));
  TO_ASSIGN_OR_RETURN(int64_t end, ctx.attribute_int("end", rank));
  if (start < 0) start = std::max<int64_t>(0, start + rank);
  if (end < 0) end = std::max<int64_t>(0, end + rank);
  start = std::min(start, rank);
  end = std::max(start, std::min(end, rank));
  ShapeValue value;
  for (int64_t i = start; i < end; ++i) value.elements.push_back(ctx.symbols().dim(ctx.net(), x, static_cast<size_t>(i)));
  return ctx.set_shape_output(0, std::move(value));
}

template <typename T, typename Field>
Result<std::shared_ptr<const ConstantValue>> list_constant(DataType dtype, const Field& values, bool scalar) {
  TO_ASSIGN_OR_RETURN(HostArray array,
                      HostArray::zeros(dtype, scalar ? Dims{} : Dims{static_cast<int64_t>(values.size())}));
  for (int i = 0; i < values.size(); ++i) array.data_as<T>()[i] = static_cast<T>(values.Get(i));
  return owned_constant(std::move(array));
}

Status convert_constant(NodeContext& ctx) {
  if (ctx.node().attribute_size() != 1)
    return ctx.invalid("a Constant has exactly one attribute, this one has {}", ctx.node().attribute_size());
  const onnx::AttributeProto& a = ctx.node().attribute(0);
  std::shared_ptr<const ConstantValue> value;
  if (a.name() == "value") {
    TO_ASSIGN_OR_RETURN(const onnx::AttributeProto* t, ctx.attribute_tensor("value"));
    TO_ASSIGN_OR_RETURN(ConstantValue v, constant_from_tensor(t->t(), ctx.model(), ctx.external(), ctx.where() + ": attribute 'value'"));
    value = std::make_shared<ConstantValue>(std::move(v));
  } else if (a.name() == "value_float" || a.name() == "value_floats") {
    ctx.attribute(a.name());
    const bool scalar = a.name() == "value_float";
    google::protobuf::RepeatedField<float> floats;
    if (scalar) floats.Add(a.f()); else floats = a.floats();
    TO_ASSIGN_OR_RETURN(value, (list_constant<float>(DataType::kFloat32, floats, scalar)));
  } else if (a.name() == "value_int" || a.name() == "value_ints") {
    ctx.attribute(a.name());
    const bool scalar = a.name() == "value_int";
    google::protobuf::RepeatedField<int64_t> ints;
    if (scalar) ints.Add(a.i()); else ints = a.ints();
    TO_ASSIGN_OR_RETURN(value, (list_constant<int64_t>(DataType::kInt64, ints, scalar)));
  } else {
    return ctx.refuse("attribute '{}' is not supported (value, value_float(s) and value_int(s) are)", a.name());
  }
  return ctx.set_constant_output(0, std::move(value));
}

}  // namespace

const std::vector<OpConverter>& shape_converters() {
  static const std::vector<OpConverter> converters = {
      {"Reshape", &convert_reshape},     {"Flatten", &convert_flatten},   {"Squeeze", &convert_squeeze},
      {"Unsqueeze", &convert_unsqueeze}, {"Transpose", &convert_transpose}, {"Concat", &convert_concat},
      {"Slice", &convert_slice},         {"Pad", &convert_pad},           {"Gather", &convert_gather},
      {"Shape", &convert_shape},         {"Constant", &convert_constant},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
