// The layer set of a Network: one OpKind per node kind and one attribute struct per layer.
//
// Attribute structs are small value objects whose setters return *this, so a layer reads as
//   net.convolution(x, w, b, ConvolutionAttributes().set_stride({2, 2}).set_padding({1, 1}));
// Every struct derives from LayerAttributes, which carries the optional layer name (errors and
// dumps use it; a generated "<kind>_<n>" name is used otherwise). The exact semantics of every
// layer and attribute are written down in docs/ops.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/types.h"

namespace tensoracle {

// ---- the op table ----
// Every node kind, declared once: X(Kind, name, Attributes, category).
//   Kind        the OpKind value k<Kind>
//   name        the stable name (op_kind_name): dumps, the canonical form and errors use it, so it
//               never changes once released
//   Attributes  the attribute struct below
//   category    how backends run it: `pointwise` (computed element by element; a backend may fuse
//               a chain of them into one kernel), `compute` (computed by a kernel of its own),
//               `data` (a constant: its bytes are bound, nothing runs) or `plugin` (the resolved
//               plugin's implementation runs)
// Derived from it: OpKind, op_kind_name / parse_op_kind / all_op_kinds, op_category, the graph's op
// registry (src/graph/op_registry.cpp: `graph::k<Kind>Op`, defined in src/graph/ops/<name>.cpp)
// and the CPU kernel table (src/backends/cpu/kernel_table.cpp: `<name>_kernel` for every
// pointwise and compute op). A missing definition or kernel does not link. docs/network.md,
// "How to add an op".
#define TENSORACLE_OP_KINDS(X)                                  \
  X(Constant, constant, ConstantAttributes, data)               \
  X(Convolution, convolution, ConvolutionAttributes, compute)   \
  X(Deconvolution, deconvolution, DeconvolutionAttributes, compute) \
  X(MatMul, matmul, MatMulAttributes, compute)                  \
  X(Elementwise, elementwise, ElementwiseAttributes, pointwise) \
  X(Unary, unary, UnaryAttributes, pointwise)                   \
  X(Activation, activation, ActivationAttributes, pointwise)    \
  X(Softmax, softmax, SoftmaxAttributes, compute)               \
  X(Reduce, reduce, ReduceAttributes, compute)                  \
  X(LayerNorm, layer_norm, LayerNormAttributes, compute)        \
  X(RmsNorm, rms_norm, RmsNormAttributes, compute)              \
  X(GroupNorm, group_norm, GroupNormAttributes, compute)        \
  X(InstanceNorm, instance_norm, InstanceNormAttributes, compute) \
  X(BatchNorm, batch_norm, BatchNormAttributes, compute)        \
  X(Pooling, pooling, PoolingAttributes, compute)               \
  X(Resize, resize, ResizeAttributes, compute)                  \
  X(Reshape, reshape, ReshapeAttributes, compute)               \
  X(Transpose, transpose, TransposeAttributes, compute)         \
  X(Concat, concat, ConcatAttributes, compute)                  \
  X(Slice, slice, SliceAttributes, compute)                     \
  X(Pad, pad, PadAttributes, compute)                           \
  X(Gather, gather, GatherAttributes, compute)                  \
  X(GridSample, grid_sample, GridSampleAttributes, compute)     \
  X(Select, select, SelectAttributes, pointwise)                \
  X(TopK, top_k, TopKAttributes, compute)                       \
  X(Attention, attention, AttentionAttributes, compute)         \
  X(Quantize, quantize, QuantizeAttributes, compute)            \
  X(Dequantize, dequantize, DequantizeAttributes, compute)      \
  X(Cast, cast, CastAttributes, pointwise)                      \
  X(Plugin, plugin, PluginAttributes, plugin)

enum class OpKind : uint8_t {
#define TO_OP_KIND_VALUE_(Kind, name, Attributes, category) k##Kind,
  TENSORACLE_OP_KINDS(TO_OP_KIND_VALUE_)
#undef TO_OP_KIND_VALUE_
};
std::string_view op_kind_name(OpKind kind);               // "convolution", "matmul", ...
std::optional<OpKind> parse_op_kind(std::string_view name);
const std::vector<OpKind>& all_op_kinds();                // in table order

enum class OpCategory : uint8_t { kPointwise, kCompute, kData, kPlugin };
OpCategory op_category(OpKind kind);
inline bool is_pointwise(OpKind kind) { return op_category(kind) == OpCategory::kPointwise; }

// ---- enumerated attribute values ----
// Each enumeration is one table X(Value, "name", ...): the enum, enum_name and parse_enum derive
// from it, and so do the cuda backend's pointwise codes (src/backends/cuda/pointwise_program.h)
// for the three tables of pointwise ops. Names are stable like op names.

// X(Op, name, class): `arithmetic` keeps the operand type; `comparison` gives bool;
// `logical` takes and gives bool.
#define TENSORACLE_ELEMENTWISE_OPS(X)                                                         \
  X(Add, "add", arithmetic) X(Sub, "sub", arithmetic) X(Mul, "mul", arithmetic)              \
  X(Div, "div", arithmetic) X(Pow, "pow", arithmetic) X(Max, "max", arithmetic)              \
  X(Min, "min", arithmetic) X(Equal, "equal", comparison) X(Less, "less", comparison)         \
  X(Greater, "greater", comparison) X(LessEqual, "less_equal", comparison)                   \
  X(GreaterEqual, "greater_equal", comparison) X(And, "and", logical) X(Or, "or", logical)
// X(Op, name, inputs): `floating` takes fp32/fp16/bf16; `signed` also int8/int32/int64.
#define TENSORACLE_UNARY_OPS(X)                                                               \
  X(Exp, "exp", floating) X(Log, "log", floating) X(Sqrt, "sqrt", floating)                  \
  X(Rsqrt, "rsqrt", floating) X(Recip, "recip", floating) X(Abs, "abs", signed)              \
  X(Neg, "neg", signed) X(Sin, "sin", floating) X(Cos, "cos", floating) X(Erf, "erf", floating) \
  X(Floor, "floor", floating) X(Ceil, "ceil", floating) X(Round, "round", floating)
// X(Kind, name, alpha, beta, parameters): the defaults of ActivationAttributes' alpha and beta
// for the kind; `parameters` says whether the kind reads them at all.
#define TENSORACLE_ACTIVATION_KINDS(X)                                   \
  X(Relu, "relu", 0.0, 0.0, false)                                       \
  X(LeakyRelu, "leaky_relu", 0.01, 0.0, true)                            \
  X(Sigmoid, "sigmoid", 0.0, 0.0, false)                                 \
  X(Tanh, "tanh", 0.0, 0.0, false)                                       \
  X(GeluErf, "gelu_erf", 0.0, 0.0, false)                                \
  X(GeluTanh, "gelu_tanh", 0.0, 0.0, false)                              \
  X(Silu, "silu", 0.0, 0.0, false)                                       \
  X(Softplus, "softplus", 1.0, 0.0, true)                                \
  X(Clip, "clip", 0.0, 6.0, true)                                        \
  X(HardSigmoid, "hard_sigmoid", 1.0 / 6.0, 0.5, true)                   \
  X(HardSwish, "hard_swish", 1.0 / 6.0, 0.5, true)
#define TENSORACLE_REDUCE_OPS(X) X(Sum, "sum") X(Mean, "mean") X(Max, "max") X(Min, "min") X(Prod, "prod")
#define TENSORACLE_POOLING_KINDS(X) X(Max, "max") X(Average, "average")
#define TENSORACLE_RESIZE_MODES(X) X(Nearest, "nearest") X(Linear, "linear")
// How an output coordinate maps to an input coordinate (docs/ops.md "Resize"):
//   asymmetric     in = out * in_size / out_size              (PyTorch mode="nearest")
//   half_pixel     in = (out + 0.5) * in_size / out_size - 0.5 (PyTorch align_corners=False,
//                                                               "nearest-exact")
//   align_corners  in = out * (in_size - 1) / (out_size - 1)
#define TENSORACLE_RESIZE_COORDINATES(X) \
  X(Asymmetric, "asymmetric") X(HalfPixel, "half_pixel") X(AlignCorners, "align_corners")
#define TENSORACLE_PAD_MODES(X) X(Constant, "constant") X(Reflect, "reflect") X(Replicate, "replicate") X(Circular, "circular")
#define TENSORACLE_GRID_SAMPLE_MODES(X) X(Bilinear, "bilinear") X(Nearest, "nearest")
#define TENSORACLE_GRID_SAMPLE_PADDINGS(X) X(Zeros, "zeros") X(Border, "border")

#define TO_ENUM_VALUE_(Value, ...) k##Value,
enum class ElementwiseOp : uint8_t { TENSORACLE_ELEMENTWISE_OPS(TO_ENUM_VALUE_) };
enum class UnaryOp : uint8_t { TENSORACLE_UNARY_OPS(TO_ENUM_VALUE_) };
enum class ActivationKind : uint8_t { TENSORACLE_ACTIVATION_KINDS(TO_ENUM_VALUE_) };
enum class ReduceOp : uint8_t { TENSORACLE_REDUCE_OPS(TO_ENUM_VALUE_) };
enum class PoolingKind : uint8_t { TENSORACLE_POOLING_KINDS(TO_ENUM_VALUE_) };
enum class ResizeMode : uint8_t { TENSORACLE_RESIZE_MODES(TO_ENUM_VALUE_) };
enum class ResizeCoordinates : uint8_t { TENSORACLE_RESIZE_COORDINATES(TO_ENUM_VALUE_) };
enum class PadMode : uint8_t { TENSORACLE_PAD_MODES(TO_ENUM_VALUE_) };
enum class GridSampleMode : uint8_t { TENSORACLE_GRID_SAMPLE_MODES(TO_ENUM_VALUE_) };
enum class GridSamplePadding : uint8_t { TENSORACLE_GRID_SAMPLE_PADDINGS(TO_ENUM_VALUE_) };
#undef TO_ENUM_VALUE_

enum class ElementwiseClass : uint8_t { kArithmetic, kComparison, kLogical };
ElementwiseClass elementwise_class(ElementwiseOp op);
bool unary_takes_signed_integers(UnaryOp op);  // abs, neg: also int8/int32/int64
// What alpha and beta are when ActivationAttributes leaves them unset, and whether the kind reads
// them at all.
double default_alpha(ActivationKind kind);
double default_beta(ActivationKind kind);
bool reads_alpha_beta(ActivationKind kind);

std::string_view enum_name(ElementwiseOp v);
std::string_view enum_name(UnaryOp v);
std::string_view enum_name(ActivationKind v);
std::string_view enum_name(ReduceOp v);
std::string_view enum_name(PoolingKind v);
std::string_view enum_name(ResizeMode v);
std::string_view enum_name(ResizeCoordinates v);
std::string_view enum_name(PadMode v);
std::string_view enum_name(GridSampleMode v);
std::string_view enum_name(GridSamplePadding v);

// Parses a name produced by enum_name. `parse_enum<ElementwiseOp>("add")`.
template <typename E>
std::optional<E> parse_enum(std::string_view name);

// ---- attribute structs ----
template <typename Derived>
struct LayerAttributes {
  std::string name;  // empty: a generated "<kind>_<n>"
  Derived& set_name(std::string value) {
    name = std::move(value);
    return static_cast<Derived&>(*this);
  }
};

// A field with its setter (TO_ATTR_DEFAULT_: with a default value).
#define TO_ATTR_(Type, field, setter) \
  Type field{};                       \
  auto& setter(Type value_) {         \
    field = std::move(value_);        \
    return *this;                     \
  }
#define TO_ATTR_DEFAULT_(Type, field, setter, default_value) \
  Type field = default_value;                                \
  auto& setter(Type value_) {                                \
    field = std::move(value_);                               \
    return *this;                                            \
  }

// A constant's element type and shape (Network::add_constant takes them from its array).
struct ConstantAttributes : LayerAttributes<ConstantAttributes> {
  TO_ATTR_DEFAULT_(DataType, dtype, set_dtype, DataType::kFloat32)
  TO_ATTR_(Dims, shape, set_shape)
};

// Convolution over the trailing 1, 2 or 3 spatial dims of an [N, C, spatial...] input with a
// [K, C/groups, kernel...] weight and an optional [K] bias. Empty vectors mean the defaults
// (stride 1, dilation 1, padding 0) for every spatial dim.
struct ConvolutionAttributes : LayerAttributes<ConvolutionAttributes> {
  TO_ATTR_(std::vector<int64_t>, stride, set_stride)
  TO_ATTR_(std::vector<int64_t>, dilation, set_dilation)
  TO_ATTR_(std::vector<int64_t>, pre_padding, set_pre_padding)
  TO_ATTR_(std::vector<int64_t>, post_padding, set_post_padding)
  TO_ATTR_DEFAULT_(int64_t, groups, set_groups, 1)
  // Symmetric padding: sets both pre and post padding.
  ConvolutionAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
};

// Transposed 2D convolution (PyTorch ConvTranspose2d): [N, C, H, W] input, [C, K/groups, kh, kw]
// weight, optional [K] bias. Output size = (in-1)*stride - pre - post + dilation*(k-1) + 1 +
// output_padding.
struct DeconvolutionAttributes : LayerAttributes<DeconvolutionAttributes> {
  TO_ATTR_(std::vector<int64_t>, stride, set_stride)
  TO_ATTR_(std::vector<int64_t>, dilation, set_dilation)
  TO_ATTR_(std::vector<int64_t>, pre_padding, set_pre_padding)
  TO_ATTR_(std::vector<int64_t>, post_padding, set_post_padding)
  TO_ATTR_(std::vector<int64_t>, output_padding, set_output_padding)
  TO_ATTR_DEFAULT_(int64_t, groups, set_groups, 1)
  DeconvolutionAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
};

// Matrix product with numpy.matmul semantics (rank-1 operands, broadcast batch dims), after
// optionally transposing the last two dims of either operand.
struct MatMulAttributes : LayerAttributes<MatMulAttributes> {
  TO_ATTR_DEFAULT_(bool, transpose_a, set_transpose_a, false)
  TO_ATTR_DEFAULT_(bool, transpose_b, set_transpose_b, false)
};

struct ElementwiseAttributes : LayerAttributes<ElementwiseAttributes> {
  TO_ATTR_DEFAULT_(ElementwiseOp, op, set_op, ElementwiseOp::kAdd)
};

struct UnaryAttributes : LayerAttributes<UnaryAttributes> {
  TO_ATTR_DEFAULT_(UnaryOp, op, set_op, UnaryOp::kExp)
};

// alpha/beta: leaky relu slope (alpha, default 0.01); clip bounds [alpha, beta] (default 0, 6);
// hard sigmoid clip(alpha*x + beta, 0, 1) and hard swish x * that (default 1/6, 1/2, PyTorch's);
// softplus
// log(1 + exp(alpha*x)) / alpha (default 1). Unused otherwise.
struct ActivationAttributes : LayerAttributes<ActivationAttributes> {
  TO_ATTR_DEFAULT_(ActivationKind, kind, set_kind, ActivationKind::kRelu)
  TO_ATTR_(std::optional<double>, alpha, set_alpha)
  TO_ATTR_(std::optional<double>, beta, set_beta)
};

struct SoftmaxAttributes : LayerAttributes<SoftmaxAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, -1)
};

// Reduces over `axes` (negative counts from the end; empty = every axis).
struct ReduceAttributes : LayerAttributes<ReduceAttributes> {
  TO_ATTR_DEFAULT_(ReduceOp, op, set_op, ReduceOp::kSum)
  TO_ATTR_(std::vector<int64_t>, axes, set_axes)
  TO_ATTR_DEFAULT_(bool, keep_dims, set_keep_dims, false)
};

// Layer norm / RMS norm over the dims [axis, rank): scale and bias have those trailing dims.
struct LayerNormAttributes : LayerAttributes<LayerNormAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, -1)
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-5)
};
struct RmsNormAttributes : LayerAttributes<RmsNormAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, -1)
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-6)
};
// Group norm over [N, C, spatial...]: C split into `groups`; per-channel [C] scale and bias.
struct GroupNormAttributes : LayerAttributes<GroupNormAttributes> {
  TO_ATTR_DEFAULT_(int64_t, groups, set_groups, 1)
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-5)
};
struct InstanceNormAttributes : LayerAttributes<InstanceNormAttributes> {
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-5)
};
// Inference batch norm on [N, C, ...] with per-channel scale, bias, running mean and variance.
struct BatchNormAttributes : LayerAttributes<BatchNormAttributes> {
  TO_ATTR_DEFAULT_(double, epsilon, set_epsilon, 1e-5)
};

// Pooling over the trailing window.size() dims (1, 2 or 3). `global`: the window is the whole
// spatial extent of an [N, C, spatial...] input (window, stride and padding must be empty).
struct PoolingAttributes : LayerAttributes<PoolingAttributes> {
  TO_ATTR_DEFAULT_(PoolingKind, kind, set_kind, PoolingKind::kMax)
  TO_ATTR_(std::vector<int64_t>, window, set_window)
  TO_ATTR_(std::vector<int64_t>, stride, set_stride)  // empty: = window
  TO_ATTR_(std::vector<int64_t>, pre_padding, set_pre_padding)
  TO_ATTR_(std::vector<int64_t>, post_padding, set_post_padding)
  TO_ATTR_DEFAULT_(bool, count_include_pad, set_count_include_pad, true)
  TO_ATTR_DEFAULT_(bool, ceil_mode, set_ceil_mode, false)
  TO_ATTR_DEFAULT_(bool, global, set_global, false)
  PoolingAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
};

// Resizes the trailing spatial dims of [N, C, spatial...] to `output_size`, or by `scales`
// (output = floor(in * scale); the coordinate mapping then uses 1/scale, as PyTorch does).
struct ResizeAttributes : LayerAttributes<ResizeAttributes> {
  TO_ATTR_DEFAULT_(ResizeMode, mode, set_mode, ResizeMode::kNearest)
  TO_ATTR_DEFAULT_(ResizeCoordinates, coordinates, set_coordinates, ResizeCoordinates::kAsymmetric)
  TO_ATTR_(std::vector<int64_t>, output_size, set_output_size)
  TO_ATTR_(std::vector<double>, scales, set_scales)
};

// New shape: 0 copies the input dim at that index, one -1 is inferred from the element count.
struct ReshapeAttributes : LayerAttributes<ReshapeAttributes> {
  TO_ATTR_(std::vector<int64_t>, shape, set_shape)
};
// output dim i = input dim perm[i].
struct TransposeAttributes : LayerAttributes<TransposeAttributes> {
  TO_ATTR_(std::vector<int64_t>, perm, set_perm)
};
struct ConcatAttributes : LayerAttributes<ConcatAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, 0)
};
// Per dim: output[i] = input[start + i*stride] for i < size. stride may be negative; every
// index read must lie inside the input.
struct SliceAttributes : LayerAttributes<SliceAttributes> {
  TO_ATTR_(std::vector<int64_t>, start, set_start)
  TO_ATTR_(std::vector<int64_t>, size, set_size)
  TO_ATTR_(std::vector<int64_t>, stride, set_stride)  // empty: all 1
};
// pre/post per dim (leading dims may be omitted: the vectors cover the trailing dims).
struct PadAttributes : LayerAttributes<PadAttributes> {
  TO_ATTR_(std::vector<int64_t>, pre, set_pre)
  TO_ATTR_(std::vector<int64_t>, post, set_post)
  TO_ATTR_DEFAULT_(PadMode, mode, set_mode, PadMode::kConstant)
  TO_ATTR_DEFAULT_(double, value, set_value, 0.0)
};
struct GatherAttributes : LayerAttributes<GatherAttributes> {
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, 0)
};
struct GridSampleAttributes : LayerAttributes<GridSampleAttributes> {
  TO_ATTR_DEFAULT_(GridSampleMode, mode, set_mode, GridSampleMode::kBilinear)
  TO_ATTR_DEFAULT_(GridSamplePadding, padding, set_padding, GridSamplePadding::kZeros)
  TO_ATTR_DEFAULT_(bool, align_corners, set_align_corners, false)
};
struct SelectAttributes : LayerAttributes<SelectAttributes> {};
// The k largest (or smallest) along `axis`, sorted; ties keep the lower index first.
// Outputs: values and int64 indices.
struct TopKAttributes : LayerAttributes<TopKAttributes> {
  TO_ATTR_DEFAULT_(int64_t, k, set_k, 1)
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, -1)
  TO_ATTR_DEFAULT_(bool, largest, set_largest, true)
};
// softmax(q k^T * scale + mask) v over [..., L, D] operands. scale defaults to 1/sqrt(D).
// causal: query i attends to keys j <= i (top-left aligned, PyTorch is_causal).
struct AttentionAttributes : LayerAttributes<AttentionAttributes> {
  TO_ATTR_DEFAULT_(bool, causal, set_causal, false)
  TO_ATTR_(std::optional<double>, scale, set_scale)
};
// Quantize: q = saturate(round_half_even(x / scale)) into `output_type` (int8 or fp8e4m3).
// Per-tensor scale (a scalar or [1] tensor) or per-channel ([C] tensor along `axis`).
struct QuantizeAttributes : LayerAttributes<QuantizeAttributes> {
  TO_ATTR_DEFAULT_(DataType, output_type, set_output_type, DataType::kInt8)
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, 1)
};
// Dequantize: y = q * scale, rounded to `output_type` (fp32, fp16 or bf16).
struct DequantizeAttributes : LayerAttributes<DequantizeAttributes> {
  TO_ATTR_DEFAULT_(DataType, output_type, set_output_type, DataType::kFloat32)
  TO_ATTR_DEFAULT_(int64_t, axis, set_axis, 1)
};
struct CastAttributes : LayerAttributes<CastAttributes> {
  TO_ATTR_DEFAULT_(DataType, output_type, set_output_type, DataType::kFloat32)
};
// A plugin node: the plugin layer (plugin.h) supplies its implementation. Until a plugin is
// resolved the node carries its declared outputs; `params` is the plugin's serialized parameters.
struct PluginAttributes : LayerAttributes<PluginAttributes> {
  TO_ATTR_(std::string, plugin, set_plugin)
  TO_ATTR_(std::string, version, set_version)
  TO_ATTR_(std::string, params, set_params)
  TO_ATTR_(std::vector<DataType>, output_types, set_output_types)
  TO_ATTR_(std::vector<Dims>, output_shapes, set_output_shapes)
};

#undef TO_ATTR_
#undef TO_ATTR_DEFAULT_

}  // namespace tensoracle
