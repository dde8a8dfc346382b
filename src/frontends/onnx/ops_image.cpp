// Image ops onto their layers: Resize (resize), GridSample (grid_sample), GroupNormalization
// (group_norm). What the layers do not compute (cubic, antialiasing, reflection padding, ONNX's
// nearest rounding modes other than the layer's) is refused by name.
#include <cmath>

#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// The layer's resize coordinates for ONNX's coordinate_transformation_mode; `sizes` are the
// output's spatial dims when known (pytorch_half_pixel differs from half_pixel only at size 1).
Result<ResizeCoordinates> resize_coordinates(NodeContext& ctx, const std::string& mode, const std::vector<int64_t>& sizes) {
  if (mode == "asymmetric") return ResizeCoordinates::kAsymmetric;
  if (mode == "half_pixel") return ResizeCoordinates::kHalfPixel;
  if (mode == "align_corners") return ResizeCoordinates::kAlignCorners;
  if (mode == "pytorch_half_pixel") {
    for (int64_t s : sizes)
      if (s <= 1) return ctx.refuse("coordinate_transformation_mode pytorch_half_pixel with an output dim of 1 is not supported");
    if (sizes.empty()) return ctx.refuse("coordinate_transformation_mode pytorch_half_pixel needs known output sizes");
    return ResizeCoordinates::kHalfPixel;
  }
  return ctx.refuse("coordinate_transformation_mode '{}' is not supported (asymmetric, half_pixel, pytorch_half_pixel, "
                    "align_corners are)",
                    mode);
}

Status convert_resize(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  const Dims shape = ctx.desc(x).shape;
  TO_ASSIGN_OR_RETURN(const std::string mode, ctx.attribute_string("mode", "nearest"));
  TO_ASSIGN_OR_RETURN(const std::string coordinates, ctx.attribute_string("coordinate_transformation_mode", "half_pixel"));
  TO_ASSIGN_OR_RETURN(const std::string nearest_mode, ctx.attribute_string("nearest_mode", "round_prefer_floor"));
  TO_ASSIGN_OR_RETURN(const int64_t antialias, ctx.attribute_int("antialias", 0));
  TO_ASSIGN_OR_RETURN(const int64_t exclude_outside, ctx.attribute_int("exclude_outside", 0));
  TO_ASSIGN_OR_RETURN(const double cubic_coeff_a, ctx.attribute_float("cubic_coeff_a", -0.75));
  TO_ASSIGN_OR_RETURN(const double extrapolation_value, ctx.attribute_float("extrapolation_value", 0.0));
  TO_ASSIGN_OR_RETURN(const std::string policy, ctx.attribute_string("keep_aspect_ratio_policy", "stretch"));
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, ctx.attribute_ints("axes"));
  (void)cubic_coeff_a;        // cubic only, refused below
  (void)extrapolation_value;  // tf_crop_and_resize only, refused below
  if (antialias != 0) return ctx.refuse("antialias {} is not supported", antialias);
  if (exclude_outside != 0) return ctx.refuse("exclude_outside {} is not supported", exclude_outside);
  if (policy != "stretch") return ctx.refuse("keep_aspect_ratio_policy '{}' is not supported (only stretch)", policy);
  if (!axes.empty()) return ctx.refuse("attribute 'axes' is not supported (scales or sizes for every dim)");
  ResizeAttributes attrs;
  if (mode == "nearest") {
    attrs.mode = ResizeMode::kNearest;
  } else if (mode == "linear") {
    attrs.mode = ResizeMode::kLinear;
  } else {
    return ctx.refuse("mode '{}' is not supported (nearest, linear are)", mode);
  }
  // Input 1 (roi) is read only by tf_crop_and_resize, which is refused.
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (ctx.has_input(3)) {
    TO_ASSIGN_OR_RETURN(sizes, ctx.int_list_input(3));
  }
  if (ctx.has_input(2)) {
    TO_ASSIGN_OR_RETURN(const ConstantValue* value, ctx.constant_input(2));
    if (value->view.element_count() > 0) {
      if (value->view.dtype != DataType::kFloat32) return ctx.invalid("scales must be float, not {}", data_type_name(value->view.dtype));
      const float* f = static_cast<const float*>(value->view.data);
      scales.assign(f, f + value->view.element_count());
    }
  }
  if (scales.empty() == sizes.empty()) return ctx.invalid("exactly one of scales and sizes must be given");
  const size_t rank = shape.rank();
  const size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != rank) return ctx.invalid("{} values for the rank-{} input", given, rank);
  // The layer resizes trailing dims: the leading ones (at least N and C) must keep their size.
  size_t leading = 0;
  while (leading < rank && (scales.empty() ? sizes[leading] == shape[leading] : scales[leading] == 1.0)) ++leading;
  if (leading < std::min<size_t>(2, rank))
    return ctx.refuse("resizing the batch or channel dim is not supported ({} of {})",
                      scales.empty() ? fmt::format("sizes [{}]", fmt::join(sizes, ",")) : fmt::format("scales [{}]", fmt::join(scales, ",")),
                      ctx.desc(x).to_string());
  leading = std::min<size_t>(leading, 2);
  if (rank - leading > 3 || rank - leading == 0) return ctx.refuse("resizing {} dims is not supported (1 to 3)", rank - leading);
  std::vector<int64_t> out_sizes;
  if (!sizes.empty()) {
    attrs.output_size.assign(sizes.begin() + static_cast<long>(leading), sizes.end());
    out_sizes = attrs.output_size;
  } else {
    attrs.scales.assign(scales.begin() + static_cast<long>(leading), scales.end());
    for (size_t i = leading; i < rank; ++i) {
      const double scaled = static_cast<double>(shape[i]) * scales[i];
      // ONNX's align_corners divides by the unrounded in * scale - 1, the layer by out - 1.
      if (coordinates == "align_corners" && (shape[i] < 0 || scaled != std::floor(scaled)))
        return ctx.refuse("align_corners with scale {} of dim {} ({} * scale is not an integer) is not supported",
                          scales[i], i, shape[i]);
      // Checked before the cast: a double beyond int64 converts to an undefined value.
      if (shape[i] >= 0 && !(scaled >= 0.0 && scaled < 9.2e18))
        return ctx.invalid("scale {} makes dim {} ({}) out of range", scales[i], i, shape[i]);
      if (shape[i] >= 0) out_sizes.push_back(static_cast<int64_t>(std::floor(scaled)));
    }
  }
  if (coordinates == "tf_crop_and_resize" || coordinates == "half_pixel_symmetric")
    return ctx.refuse("coordinate_transformation_mode '{}' is not supported", coordinates);
  TO_ASSIGN_OR_RETURN(attrs.coordinates, resize_coordinates(ctx, coordinates, out_sizes));
  if (attrs.mode == ResizeMode::kNearest) {
    // The layer's nearest pick (docs/ops.md): floor for asymmetric, floor(x + 0.5) (ties up) for
    // half_pixel and align_corners.
    const std::string matching = attrs.coordinates == ResizeCoordinates::kAsymmetric ? "floor" : "round_prefer_ceil";
    if (nearest_mode != matching)
      return ctx.refuse("nearest_mode '{}' with coordinate_transformation_mode '{}' is not supported (the layer rounds "
                        "as '{}' there)",
                        nearest_mode, coordinates, matching);
  }
  return ctx.set_output(0, ctx.net().resize(x, attrs.set_name(ctx.layer_name())));
}

Status convert_grid_sample(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t align_corners, ctx.attribute_int("align_corners", 0));
  TO_ASSIGN_OR_RETURN(const std::string mode, ctx.attribute_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear"));
  TO_ASSIGN_OR_RETURN(const std::string padding, ctx.attribute_string("padding_mode", "zeros"));
  GridSampleAttributes attrs;
  attrs.align_corners = align_corners != 0;
  if (mode == "bilinear" || mode == "linear") {
    attrs.mode = GridSampleMode::kBilinear;
  } else if (mode == "nearest") {
    attrs.mode = GridSampleMode::kNearest;
  } else {
    return ctx.refuse("mode '{}' is not supported (linear/bilinear, nearest are)", mode);
  }
  if (padding == "zeros") {
    attrs.padding = GridSamplePadding::kZeros;
  } else if (padding == "border") {
    attrs.padding = GridSamplePadding::kBorder;
  } else {
    return ctx.refuse("padding_mode '{}' is not supported (zeros, border are)", padding);
  }
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor grid, ctx.input(1));
  return ctx.set_output(0, ctx.net().grid_sample(x, grid, attrs.set_name(ctx.layer_name())));
}

// Opset 21 scales and shifts per channel ([C]); opset 18 per group ([num_groups]), which the
// per-channel layer takes with each group's value repeated over its channels (a gather).
Status convert_group_norm(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double epsilon, ctx.attribute_float("epsilon", 1e-5));
  TO_ASSIGN_OR_RETURN(const int64_t groups, ctx.attribute_int("num_groups", 0));
  TO_ASSIGN_OR_RETURN(const int64_t stash_type, ctx.attribute_int("stash_type", 1));
  (void)stash_type;  // the layer computes its statistics in fp64 whatever the stash type
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(Tensor scale, ctx.input(1));
  TO_ASSIGN_OR_RETURN(Tensor bias, ctx.input(2));
  const Dims shape = ctx.desc(x).shape;
  if (shape.rank() < 2) return ctx.invalid("input {} has no channel dim", ctx.desc(x).to_string());
  const int64_t channels = shape[1];
  if (groups < 1) return ctx.invalid("num_groups {} must be >= 1", groups);
  if (ctx.opset() < 21 && ctx.desc(scale).shape == Dims{groups} && channels != groups) {
    if (channels < 0) return ctx.refuse("per-group scale and bias with a dynamic channel dim are not supported");
    if (channels % groups != 0) return ctx.invalid("num_groups {} does not divide the {} channels", groups, channels);
    std::vector<int64_t> group_of(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) group_of[static_cast<size_t>(c)] = c / (channels / groups);
    TO_ASSIGN_OR_RETURN(const Tensor index, int64_constant(ctx, group_of, ctx.layer_name() + "/group_of_channel"));
    scale = ctx.net().gather(scale, index, GatherAttributes().set_name(ctx.layer_name() + "/scale"));
    bias = ctx.net().gather(bias, index, GatherAttributes().set_name(ctx.layer_name() + "/bias"));
  }
  return ctx.set_output(0, ctx.net().group_norm(x, scale, bias,
                                                GroupNormAttributes().set_groups(groups).set_epsilon(epsilon).set_name(ctx.layer_name())));
}

}  // namespace

const std::vector<OpConverter>& image_converters() {
  static const std::vector<OpConverter> converters = {
      {"Resize", &convert_resize},
      {"GridSample", &convert_grid_sample},
      {"GroupNormalization", &convert_group_norm},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
