// The layer set of a Network: one OpKind per node kind and one attribute struct per layer.
//
// Attribute structs are small value objects whose setters return *this, so a layer reads as
//   net.convolution(x, w, b, ConvolutionAttributes().set_stride({2, 2}).set_padding({1, 1}));
// Every struct derives from LayerAttributes, which carries the optional layer name (errors and
// dumps use it; a generated "<kind>_<n>" name is used otherwise). The exact semantics of every
// layer and attribute are written down in docs/ops.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
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
  X(Iota, iota, IotaAttributes, compute)                        \
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
  X(Min, "min", arithmetic) X(Mod, "mod", arithmetic) X(Fmod, "fmod", arithmetic)            \
  X(Equal, "equal", comparison) X(Less, "less", comparison)                                  \
  X(Greater, "greater", comparison) X(LessEqual, "less_equal", comparison)                   \
  X(GreaterEqual, "greater_equal", comparison) X(And, "and", logical) X(Or, "or", logical)
// X(Op, name, inputs): `floating` takes fp32/fp16/bf16; `signed` also int8/int32/int64.
#define TENSORACLE_UNARY_OPS(X)                                                               \
  X(Exp, "exp", floating) X(Log, "log", floating) X(Sqrt, "sqrt", floating)                  \
  X(Rsqrt, "rsqrt", floating) X(Recip, "recip", floating) X(Abs, "abs", signed)              \
  X(Neg, "neg", signed) X(Sign, "sign", signed) X(Sin, "sin", floating)                      \
  X(Cos, "cos", floating) X(Erf, "erf", floating) X(Floor, "floor", floating)                \
  X(Ceil, "ceil", floating) X(Round, "round", floating)
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
bool unary_takes_signed_integers(UnaryOp op);  // abs, neg, sign: also int8/int32/int64
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
// Every name of an enumeration, in declaration order (enum_names<PadMode>()[1] == "reflect").
template <typename E>
const std::vector<std::string_view>& enum_names();

// ---- attribute structs ----
// One struct per op kind (the op table names it). Every struct lists its fields once, as
// X(Type, field, default): that declares the member `field` with its default and the chained
// setter `set_<field>`, and `visit_fields(visitor)` calls `visitor("field", &Struct::field)` for
// each field in order. The list is what converts a struct to and from its AttributeMap (the
// serialized form: canonical form, dumps, network_from_json, Network::add_layer), and what
// bindings and importers use to set and read fields by name, so a field cannot exist outside
// it. A struct's defaults are the op's defaults: nothing else in the library restates them.
template <typename Derived>
struct LayerAttributes {
  using Self = Derived;
  std::string name;  // empty: a generated "<kind>_<n>"; not an attribute (no field)
  Derived& set_name(std::string value) {
    name = std::move(value);
    return static_cast<Derived&>(*this);
  }
};

#define TO_FIELD_MEMBER_(Type, field, default_value) \
  Type field = default_value;                        \
  auto& set_##field(Type value_) {                   \
    field = std::move(value_);                       \
    return *this;                                    \
  }
#define TO_FIELD_VISIT_(Type, field, default_value) visitor(#field, &Self::field);
#define TO_FIELDS_(LIST)                             \
  LIST(TO_FIELD_MEMBER_)                             \
  template <typename Visitor>                        \
  static void visit_fields(Visitor&& visitor) {      \
    LIST(TO_FIELD_VISIT_)                            \
  }
#define TO_NO_FIELDS_                                \
  template <typename Visitor>                        \
  static void visit_fields(Visitor&&) {}

// `v` for each of n dims; an empty `v` means `fill` for every dim.
inline std::vector<int64_t> per_dim(const std::vector<int64_t>& v, size_t n, int64_t fill) {
  return v.empty() ? std::vector<int64_t>(n, fill) : v;
}

// A constant's element type and shape (Network::add_constant takes them from its array).
struct ConstantAttributes : LayerAttributes<ConstantAttributes> {
#define TO_LIST_(X)                              \
  X(DataType, dtype, DataType::kFloat32)         \
  X(Dims, shape, {})
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};

// Convolution over the trailing 1, 2 or 3 spatial dims of an [N, C, spatial...] input with a
// [K, C/groups, kernel...] weight and an optional [K] bias. Empty vectors mean the defaults
// (stride 1, dilation 1, padding 0) for every spatial dim.
struct ConvolutionAttributes : LayerAttributes<ConvolutionAttributes> {
#define TO_LIST_(X)                              \
  X(std::vector<int64_t>, stride, {})            \
  X(std::vector<int64_t>, dilation, {})          \
  X(std::vector<int64_t>, pre_padding, {})       \
  X(std::vector<int64_t>, post_padding, {})      \
  X(int64_t, groups, 1)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
  // Symmetric padding: sets both pre and post padding.
  ConvolutionAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
  // The values for n spatial dims, defaults expanded.
  std::vector<int64_t> strides(size_t n) const { return per_dim(stride, n, 1); }
  std::vector<int64_t> dilations(size_t n) const { return per_dim(dilation, n, 1); }
  std::vector<int64_t> pre_paddings(size_t n) const { return per_dim(pre_padding, n, 0); }
  std::vector<int64_t> post_paddings(size_t n) const { return per_dim(post_padding, n, 0); }
};

// Transposed 2D convolution (PyTorch ConvTranspose2d): [N, C, H, W] input, [C, K/groups, kh, kw]
// weight, optional [K] bias. Output size = (in-1)*stride - pre - post + dilation*(k-1) + 1 +
// output_padding. Empty vectors mean the defaults (stride and dilation 1, paddings 0).
struct DeconvolutionAttributes : LayerAttributes<DeconvolutionAttributes> {
#define TO_LIST_(X)                              \
  X(std::vector<int64_t>, stride, {})            \
  X(std::vector<int64_t>, dilation, {})          \
  X(std::vector<int64_t>, pre_padding, {})       \
  X(std::vector<int64_t>, post_padding, {})      \
  X(std::vector<int64_t>, output_padding, {})    \
  X(int64_t, groups, 1)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
  DeconvolutionAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
  std::vector<int64_t> strides(size_t n) const { return per_dim(stride, n, 1); }
  std::vector<int64_t> dilations(size_t n) const { return per_dim(dilation, n, 1); }
  std::vector<int64_t> pre_paddings(size_t n) const { return per_dim(pre_padding, n, 0); }
  std::vector<int64_t> post_paddings(size_t n) const { return per_dim(post_padding, n, 0); }
  std::vector<int64_t> output_paddings(size_t n) const { return per_dim(output_padding, n, 0); }
};

// Matrix product with numpy.matmul semantics (rank-1 operands, broadcast batch dims), after
// optionally transposing the last two dims of either operand.
struct MatMulAttributes : LayerAttributes<MatMulAttributes> {
#define TO_LIST_(X)                              \
  X(bool, transpose_a, false)                    \
  X(bool, transpose_b, false)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};

struct ElementwiseAttributes : LayerAttributes<ElementwiseAttributes> {
#define TO_LIST_(X) X(ElementwiseOp, op, ElementwiseOp::kAdd)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};

struct UnaryAttributes : LayerAttributes<UnaryAttributes> {
#define TO_LIST_(X) X(UnaryOp, op, UnaryOp::kExp)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};

// alpha/beta: leaky relu slope (alpha, default 0.01); clip bounds [alpha, beta] (default 0, 6);
// hard sigmoid clip(alpha*x + beta, 0, 1) and hard swish x * that (default 1/6, 1/2, PyTorch's);
// softplus log(1 + exp(alpha*x)) / alpha (default 1). Unused otherwise. The defaults by kind are
// the activation table's (TENSORACLE_ACTIVATION_KINDS); a defined layer stores them explicitly,
// so "default" and "explicitly the default value" are the same layer.
struct ActivationAttributes : LayerAttributes<ActivationAttributes> {
#define TO_LIST_(X)                              \
  X(ActivationKind, kind, ActivationKind::kRelu) \
  X(std::optional<double>, alpha, std::nullopt)  \
  X(std::optional<double>, beta, std::nullopt)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
  double alpha_value() const { return alpha ? *alpha : default_alpha(kind); }
  double beta_value() const { return beta ? *beta : default_beta(kind); }
};

struct SoftmaxAttributes : LayerAttributes<SoftmaxAttributes> {
#define TO_LIST_(X) X(int64_t, axis, -1)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};

// Reduces over `axes` (negative counts from the end; empty = every axis).
struct ReduceAttributes : LayerAttributes<ReduceAttributes> {
#define TO_LIST_(X)                              \
  X(ReduceOp, op, ReduceOp::kSum)                \
  X(std::vector<int64_t>, axes, {})              \
  X(bool, keep_dims, false)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};

// Layer norm / RMS norm over the dims [axis, rank): scale and bias have those trailing dims.
struct LayerNormAttributes : LayerAttributes<LayerNormAttributes> {
#define TO_LIST_(X)                              \
  X(int64_t, axis, -1)                           \
  X(double, epsilon, 1e-5)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
struct RmsNormAttributes : LayerAttributes<RmsNormAttributes> {
#define TO_LIST_(X)                              \
  X(int64_t, axis, -1)                           \
  X(double, epsilon, 1e-6)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
// Group norm over [N, C, spatial...]: C split into `groups`; per-channel [C] scale and bias.
struct GroupNormAttributes : LayerAttributes<GroupNormAttributes> {
#define TO_LIST_(X)                              \
  X(int64_t, groups, 1)                          \
  X(double, epsilon, 1e-5)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
struct InstanceNormAttributes : LayerAttributes<InstanceNormAttributes> {
#define TO_LIST_(X) X(double, epsilon, 1e-5)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
// Inference batch norm on [N, C, ...] with per-channel scale, bias, running mean and variance.
struct BatchNormAttributes : LayerAttributes<BatchNormAttributes> {
#define TO_LIST_(X) X(double, epsilon, 1e-5)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};

// Pooling over the trailing window.size() dims (1, 2 or 3). `global`: the window is the whole
// spatial extent of an [N, C, spatial...] input (window, stride and padding must be empty).
// An empty stride is the window (a defined layer stores it so); empty paddings are 0.
struct PoolingAttributes : LayerAttributes<PoolingAttributes> {
#define TO_LIST_(X)                              \
  X(PoolingKind, kind, PoolingKind::kMax)        \
  X(std::vector<int64_t>, window, {})            \
  X(std::vector<int64_t>, stride, {})            \
  X(std::vector<int64_t>, pre_padding, {})       \
  X(std::vector<int64_t>, post_padding, {})      \
  X(bool, count_include_pad, true)               \
  X(bool, ceil_mode, false)                      \
  X(bool, global, false)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
  PoolingAttributes& set_padding(std::vector<int64_t> value) {
    pre_padding = value;
    post_padding = std::move(value);
    return *this;
  }
  std::vector<int64_t> strides(size_t n) const { return stride.empty() ? per_dim(window, n, 1) : stride; }
  std::vector<int64_t> pre_paddings(size_t n) const { return per_dim(pre_padding, n, 0); }
  std::vector<int64_t> post_paddings(size_t n) const { return per_dim(post_padding, n, 0); }
};

// Resizes the trailing spatial dims of [N, C, spatial...] to `output_size`, or by `scales`
// (output = floor(in * scale); the coordinate mapping then uses 1/scale, as PyTorch does).
struct ResizeAttributes : LayerAttributes<ResizeAttributes> {
#define TO_LIST_(X)                                                    \
  X(ResizeMode, mode, ResizeMode::kNearest)                            \
  X(ResizeCoordinates, coordinates, ResizeCoordinates::kAsymmetric)    \
  X(std::vector<int64_t>, output_size, {})                             \
  X(std::vector<double>, scales, {})
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
  // The number of resized trailing dims.
  size_t spatial_rank() const { return scales.empty() ? output_size.size() : scales.size(); }
};

// New shape: 0 copies the input dim at that index, one -1 is inferred from the element count.
struct ReshapeAttributes : LayerAttributes<ReshapeAttributes> {
#define TO_LIST_(X) X(std::vector<int64_t>, shape, {})
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
// output dim i = input dim perm[i].
struct TransposeAttributes : LayerAttributes<TransposeAttributes> {
#define TO_LIST_(X) X(std::vector<int64_t>, perm, {})
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
struct ConcatAttributes : LayerAttributes<ConcatAttributes> {
#define TO_LIST_(X) X(int64_t, axis, 0)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
// Per dim: output[i] = input[start + i*stride] for i < size. stride may be negative; every
// index read must lie inside the input.
struct SliceAttributes : LayerAttributes<SliceAttributes> {
#define TO_LIST_(X)                              \
  X(std::vector<int64_t>, start, {})             \
  X(std::vector<int64_t>, size, {})              \
  X(std::vector<int64_t>, stride, {}) /* empty: all 1 */
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
  std::vector<int64_t> strides(size_t rank) const { return per_dim(stride, rank, 1); }
};
// pre/post per dim (leading dims may be omitted: the vectors cover the trailing dims).
struct PadAttributes : LayerAttributes<PadAttributes> {
#define TO_LIST_(X)                              \
  X(std::vector<int64_t>, pre, {})               \
  X(std::vector<int64_t>, post, {})              \
  X(PadMode, mode, PadMode::kConstant)           \
  X(double, value, 0.0)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
struct GatherAttributes : LayerAttributes<GatherAttributes> {
#define TO_LIST_(X) X(int64_t, axis, 0)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
// int64 [0, 1, ..., n-1] where n is dim `axis` of the input, whose values are not read.
struct IotaAttributes : LayerAttributes<IotaAttributes> {
#define TO_LIST_(X) X(int64_t, axis, 0)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
struct GridSampleAttributes : LayerAttributes<GridSampleAttributes> {
#define TO_LIST_(X)                                          \
  X(GridSampleMode, mode, GridSampleMode::kBilinear)         \
  X(GridSamplePadding, padding, GridSamplePadding::kZeros)   \
  X(bool, align_corners, false)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
struct SelectAttributes : LayerAttributes<SelectAttributes> {
  TO_NO_FIELDS_
};
// The k largest (or smallest) along `axis`, sorted; ties keep the lower index first.
// Outputs: values and int64 indices.
struct TopKAttributes : LayerAttributes<TopKAttributes> {
#define TO_LIST_(X)                              \
  X(int64_t, k, 1)                               \
  X(int64_t, axis, -1)                           \
  X(bool, largest, true)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
// softmax(q k^T * scale + mask) v over [..., L, D] operands. scale defaults to 1/sqrt(D).
// causal: query i attends to keys j <= i (top-left aligned, PyTorch is_causal).
struct AttentionAttributes : LayerAttributes<AttentionAttributes> {
#define TO_LIST_(X)                              \
  X(bool, causal, false)                         \
  X(std::optional<double>, scale, std::nullopt)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
  double scale_for(int64_t head_dim) const {
    return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
  }
};
// Quantize: q = saturate(round_half_even(x / scale)) into `output_type` (int8 or fp8e4m3).
// Per-tensor scale (a scalar or [1] tensor) or per-channel ([C] tensor along `axis`).
struct QuantizeAttributes : LayerAttributes<QuantizeAttributes> {
#define TO_LIST_(X)                              \
  X(DataType, output_type, DataType::kInt8)      \
  X(int64_t, axis, 1)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
// Dequantize: y = q * scale, rounded to `output_type` (fp32, fp16 or bf16).
struct DequantizeAttributes : LayerAttributes<DequantizeAttributes> {
#define TO_LIST_(X)                              \
  X(DataType, output_type, DataType::kFloat32)   \
  X(int64_t, axis, 1)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
struct CastAttributes : LayerAttributes<CastAttributes> {
#define TO_LIST_(X) X(DataType, output_type, DataType::kFloat32)
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};
// A plugin node (plugin_runtime.h): `plugin` is the qualified name ("example::scale_add"),
// `params` the plugin's serialized parameters as lower-case hex (so that dumps, the canonical form
// and engines carry them as text). The node records its outputs: their types, their shapes at
// definition time, and for each output the input whose shape it copies (-1: computed by the
// plugin, then the recorded shape is the output's at every input shape and must be static).
// Network::plugin(inputs, identity, parameters) fills all of it from the plugin itself.
// (Serialized, the output shapes are the keys output_ranks and output_dims.)
struct PluginAttributes : LayerAttributes<PluginAttributes> {
#define TO_LIST_(X)                              \
  X(std::string, plugin, {})                     \
  X(std::string, version, {})                    \
  X(std::string, params, {})                     \
  X(std::vector<DataType>, output_types, {})     \
  X(std::vector<Dims>, output_shapes, {})        \
  X(std::vector<int64_t>, output_copy_inputs, {})
  TO_FIELDS_(TO_LIST_)
#undef TO_LIST_
};

#undef TO_NO_FIELDS_
#undef TO_FIELDS_
#undef TO_FIELD_VISIT_
#undef TO_FIELD_MEMBER_

// ---- the attributes of any op ----
namespace internal {
template <typename Ignored, typename... Attributes>
using VariantOf = std::variant<Attributes...>;
}  // namespace internal

// One alternative per op kind, in op-table order: OpAttributes::index() is the OpKind's value.
#define TO_ATTRIBUTES_ALTERNATIVE_(Kind, name, Attributes, category) , Attributes
using OpAttributes = internal::VariantOf<void TENSORACLE_OP_KINDS(TO_ATTRIBUTES_ALTERNATIVE_)>;
#undef TO_ATTRIBUTES_ALTERNATIVE_

// The attribute struct of an op kind, and the op kind of an attribute struct.
template <OpKind kind>
using AttributesOf = std::variant_alternative_t<static_cast<size_t>(kind), OpAttributes>;
template <typename Attributes>
struct OpKindOf;
#define TO_OP_KIND_OF_(Kind, name, Attributes, category)                     \
  template <>                                                                \
  struct OpKindOf<Attributes> {                                              \
    static constexpr OpKind value = OpKind::k##Kind;                         \
  };                                                                         \
  static_assert(std::is_same_v<AttributesOf<OpKind::k##Kind>, Attributes>, "OpAttributes follows the op table");
TENSORACLE_OP_KINDS(TO_OP_KIND_OF_)
#undef TO_OP_KIND_OF_
template <typename Attributes>
inline constexpr OpKind op_kind_of = OpKindOf<Attributes>::value;

inline OpKind op_kind_of_attributes(const OpAttributes& attributes) {
  return static_cast<OpKind>(attributes.index());
}
// The struct of `kind` with every field at its default.
OpAttributes default_attributes(OpKind kind);

}  // namespace tensoracle
