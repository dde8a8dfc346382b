// Data movement built from gather, slice, reshape and transpose: Expand and Tile (a gather with
// constant indices repeats a dim exactly, for every type), Split (slices), DepthToSpace and
// SpaceToDepth (reshape, transpose, reshape).
#include <numeric>

#include "frontends/onnx/fold.h"
#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// `x` with dim `axis` replaced by x[..., indices, ...].
Result<Tensor> gather_along(NodeContext& ctx, Tensor x, int64_t axis, const std::vector<int64_t>& indices,
                            const std::string& name) {
  TO_ASSIGN_OR_RETURN(const Tensor index, int64_constant(ctx, indices, name + "/indices"));
  const Tensor y = ctx.net().gather(x, index, GatherAttributes().set_axis(axis).set_name(name));
  TO_RETURN_IF_ERROR(ctx.network_status());
  return y;
}

Status convert_expand(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(Tensor x, ctx.input(0));
  std::vector<int64_t> target;
  std::map<size_t, SymbolicDim> to_dynamic;  // by index in target
  if (const ShapeValue* value = ctx.shape_input(1)) {
    TO_ASSIGN_OR_RETURN(target, expand_target(ctx, x, *value, to_dynamic));
  } else {
    TO_ASSIGN_OR_RETURN(target, ctx.int_list_input(1));
  }
  const Dims shape = ctx.desc(x).shape;
  const size_t rank = std::max(shape.rank(), target.size());
  if (rank > Dims::kMaxRank) return ctx.invalid("the output rank {} exceeds {}", rank, Dims::kMaxRank);
  // Both shapes right-aligned, padded with 1s on the left (numpy broadcasting).
  std::vector<int64_t> padded(rank - shape.rank(), 1), from(rank - shape.rank(), -1), wanted(rank - target.size(), 1);
  for (size_t i = 0; i < shape.rank(); ++i) {
    padded.push_back(shape[i]);
    from.push_back(static_cast<int64_t>(i));
  }
  wanted.insert(wanted.end(), target.begin(), target.end());
  const std::string& name = ctx.layer_name();
  if (shape.rank() < rank) {
    TO_ASSIGN_OR_RETURN(x, reshape_moving(ctx, x, padded, from, name + "/rank"));
  }
  bool changed = shape.rank() < rank;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t have = padded[i];
    const int64_t want = wanted[i];
    if (want < 0) return ctx.invalid("shape [{}] has the negative dim {}", fmt::join(target, ","), want);
    if (want == 1 || want == have) continue;
    if (have < 0)
      return ctx.refuse("broadcasting the dynamic dim {} to {} is not supported (it must be 1 or {} at run time)", i,
                        want, want);
    if (have != 1)
      return ctx.invalid("dim {} of {} cannot broadcast to {} (shape [{}])", i, ctx.desc(x).to_string(), want,
                         fmt::join(target, ","));
    // The gather's indices are made at import: `want` (read from the model, untrusted) is bounded
    // before they are allocated, by the importer's limit on the values it computes itself.
    if (want > kMaxFoldedElements)
      return ctx.refuse("broadcasting dim {} of {} to {} would make {} int64 indices at import, over the {} this "
                        "importer computes",
                        i, ctx.desc(x).to_string(), want, want, kMaxFoldedElements);
    TO_ASSIGN_OR_RETURN(x, gather_along(ctx, x, static_cast<int64_t>(i), std::vector<int64_t>(static_cast<size_t>(want), 0),
                                        fmt::format("{}/dim{}", name, i)));
    changed = true;
  }
  // A dim of 1 broadcast to a dynamic size: a gather by that many zeros.
  for (const auto& [k, size] : to_dynamic) {
    const size_t axis = k + (rank - target.size());
    const std::string dim_name = fmt::format("{}/dim{}", name, axis);
    TO_ASSIGN_OR_RETURN(const Tensor iota, iota_of(ctx, size, dim_name + "/iota"));
    TO_ASSIGN_OR_RETURN(const Tensor zeros, zeros_like_iota(ctx, iota, dim_name + "/zeros"));
    x = ctx.net().gather(x, zeros, GatherAttributes().set_axis(static_cast<int64_t>(axis)).set_name(dim_name));
    TO_RETURN_IF_ERROR(ctx.network_status());
    changed = true;
  }
  return ctx.set_output(0, changed ? x : copy_of(ctx.net(), x, name));
}

Status convert_tile(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> repeats, ctx.int_list_input(1));
  const Dims shape = ctx.desc(x).shape;
  if (repeats.size() != shape.rank())
    return ctx.invalid("repeats has {} values for the rank-{} input", repeats.size(), shape.rank());
  bool changed = false;
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] < 0) return ctx.invalid("repeats [{}] has a negative value", fmt::join(repeats, ","));
    if (repeats[i] == 1) continue;
    if (shape[i] < 0) return ctx.refuse("tiling the dynamic dim {} is not supported", i);
    const auto count = checked_mul(shape[i], repeats[i]);
    if (!count || *count > (int64_t{1} << 31)) return ctx.invalid("dim {} tiled {} times is too large", shape[i], repeats[i]);
    std::vector<int64_t> indices(static_cast<size_t>(*count));
    for (size_t j = 0; j < indices.size(); ++j) indices[j] = static_cast<int64_t>(j) % shape[i];
    TO_ASSIGN_OR_RETURN(x, gather_along(ctx, x, static_cast<int64_t>(i), indices, fmt::format("{}/dim{}", ctx.layer_name(), i)));
    changed = true;
  }
  return ctx.set_output(0, changed ? x : copy_of(ctx.net(), x, ctx.layer_name()));
}

Status convert_split(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const Dims shape = ctx.desc(x).shape;
  const int64_t rank = static_cast<int64_t>(shape.rank());
  TO_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.attribute_int("axis", 0));
  TO_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(ctx, axis_attr, rank, "axis"));
  const int64_t dim = shape[static_cast<size_t>(axis)];
  if (dim < 0) return ctx.refuse("splitting the dynamic dim {} is not supported", axis);
  const int64_t outputs = ctx.num_outputs();
  TO_ASSIGN_OR_RETURN(const int64_t num_outputs, ctx.attribute_int("num_outputs", 0));
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    TO_ASSIGN_OR_RETURN(sizes, ctx.int_list_input(1));
    if (static_cast<int64_t>(sizes.size()) != outputs)
      return ctx.invalid("split has {} sizes for {} outputs", sizes.size(), outputs);
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) return ctx.invalid("split [{}] has a negative size", fmt::join(sizes, ","));
      total += s;
    }
    if (total != dim) return ctx.invalid("split [{}] sums to {}, the dim {} is {}", fmt::join(sizes, ","), total, axis, dim);
  } else {
    if (num_outputs != 0 && num_outputs != outputs)
      return ctx.invalid("num_outputs is {} but the node has {} outputs", num_outputs, outputs);
    // Equal parts; from opset 18 the last may be smaller (ceil), before that they must divide.
    const int64_t part = (dim + outputs - 1) / outputs;
    if (ctx.opset() < 18 && dim % outputs != 0)
      return ctx.invalid("dim {} of size {} does not split into {} equal parts", axis, dim, outputs);
    for (int64_t i = 0; i < outputs; ++i) sizes.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
  }
  for (int64_t i = 0, start = 0; i < outputs; start += sizes[static_cast<size_t>(i)], ++i) {
    SliceAttributes attrs;
    attrs.start.assign(static_cast<size_t>(rank), 0);
    attrs.size = shape.values();
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && shape[static_cast<size_t>(d)] < 0)
        return ctx.refuse("Split of a tensor with the dynamic dim {} is not supported", d);
    attrs.start[static_cast<size_t>(axis)] = start;
    attrs.size[static_cast<size_t>(axis)] = sizes[static_cast<size_t>(i)];
    const std::string name = i == 0 ? ctx.layer_name() : fmt::format("{}/{}", ctx.layer_name(), i);
    TO_RETURN_IF_ERROR(ctx.set_output(static_cast<int>(i), ctx.net().slice(x, attrs.set_name(name))));
  }
  return Status::ok();
}

// [N, C, H, W] with static C, H, W (N may be dynamic).
Result<std::vector<int64_t>> image_dims(NodeContext& ctx, Tensor x) {
  const Dims s = ctx.desc(x).shape;
  if (s.rank() != 4) return ctx.invalid("input {} is not [N, C, H, W]", ctx.desc(x).to_string());
  for (size_t i = 1; i < 4; ++i)
    if (s[i] < 0) return ctx.refuse("input {} has a dynamic C, H or W; not supported", ctx.desc(x).to_string());
  return s.values();
}

// reshape to `split`, transpose by `perm`, reshape to `out` (the batch dim copied: 0).
Status shuffle(NodeContext& ctx, Tensor x, std::vector<int64_t> split, const std::vector<int64_t>& perm,
               std::vector<int64_t> out) {
  Network& net = ctx.net();
  const std::string& name = ctx.layer_name();
  split[0] = 0;
  out[0] = 0;
  const Tensor a = net.reshape(x, ReshapeAttributes().set_shape(split).set_name(name + "/split"));
  const Tensor b = net.transpose(a, TransposeAttributes().set_perm(perm).set_name(name + "/transpose"));
  return ctx.set_output(0, net.reshape(b, ReshapeAttributes().set_shape(out).set_name(name)));
}

Status convert_depth_to_space(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t b, ctx.attribute_int("blocksize", 0));
  TO_ASSIGN_OR_RETURN(const std::string mode, ctx.attribute_string("mode", "DCR"));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> s, image_dims(ctx, x));
  if (b < 1 || s[1] % (b * b) != 0) return ctx.invalid("blocksize {} does not divide the {} channels into b*b", b, s[1]);
  const int64_t c = s[1] / (b * b);
  const std::vector<int64_t> out{s[0], c, s[2] * b, s[3] * b};
  if (mode == "DCR") return shuffle(ctx, x, {s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2}, out);
  if (mode == "CRD") return shuffle(ctx, x, {s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3}, out);
  return ctx.invalid("mode '{}' is not DCR or CRD", mode);
}

Status convert_space_to_depth(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t b, ctx.attribute_int("blocksize", 0));
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> s, image_dims(ctx, x));
  if (b < 1 || s[2] % b != 0 || s[3] % b != 0)
    return ctx.invalid("blocksize {} does not divide H {} and W {}", b, s[2], s[3]);
  return shuffle(ctx, x, {s[0], s[1], s[2] / b, b, s[3] / b, b}, {0, 3, 5, 1, 2, 4},
                 {s[0], s[1] * b * b, s[2] / b, s[3] / b});
}

}  // namespace

const std::vector<OpConverter>& layout_converters() {
  static const std::vector<OpConverter> converters = {
      {"Expand", &convert_expand},
      {"Tile", &convert_tile},
      {"Split", &convert_split},
      {"DepthToSpace", &convert_depth_to_space},
      {"SpaceToDepth", &convert_space_to_depth},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
