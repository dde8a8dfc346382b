// Element-by-element ops: binary arithmetic, comparison and logic, unary math, activations,
// Where, Cast, and the identities (Identity, Dropout at inference).
#include <cmath>
#include <limits>

#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// Both operands of a binary op must have one type: the layers do not promote.
Status check_same_type(NodeContext& ctx, Tensor a, Tensor b) {
  const DataType ta = ctx.desc(a).dtype;
  const DataType tb = ctx.desc(b).dtype;
  if (ta != tb)
    return ctx.refuse("operands of types {} and {}: mixed operand types are not supported", data_type_name(ta),
                      data_type_name(tb));
  return Status::ok();
}

Status binary(NodeContext& ctx, ElementwiseOp op) {
  TO_ASSIGN_OR_RETURN(const Tensor a, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor b, ctx.input(1));
  TO_RETURN_IF_ERROR(check_same_type(ctx, a, b));
  return ctx.set_output(0, ctx.net().elementwise(a, b, ElementwiseAttributes().set_op(op).set_name(ctx.layer_name())));
}

// Max, Min, Sum: any number of operands, folded left to right.
Status variadic(NodeContext& ctx, ElementwiseOp op) {
  TO_ASSIGN_OR_RETURN(Tensor acc, ctx.input(0));
  if (ctx.num_inputs() == 1) return ctx.set_output(0, copy_of(ctx.net(), acc, ctx.layer_name()));
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    TO_ASSIGN_OR_RETURN(const Tensor next, ctx.input(i));
    TO_RETURN_IF_ERROR(check_same_type(ctx, acc, next));
    acc = ctx.net().elementwise(acc, next,
                                ElementwiseAttributes().set_op(op).set_name(fmt::format("{}/{}", ctx.layer_name(), i)));
  }
  return ctx.set_output(0, acc);
}

Status unary(NodeContext& ctx, UnaryOp op) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  return ctx.set_output(0, ctx.net().unary(x, UnaryAttributes().set_op(op).set_name(ctx.layer_name())));
}

Status activation(NodeContext& ctx, ActivationAttributes attrs) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  return ctx.set_output(0, ctx.net().activation(x, attrs.set_name(ctx.layer_name())));
}

Status convert_mod(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t fmod, ctx.attribute_int("fmod", 0));
  return binary(ctx, fmod != 0 ? ElementwiseOp::kFmod : ElementwiseOp::kMod);
}

Status convert_leaky_relu(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double alpha, ctx.attribute_float("alpha", 0.01));
  return activation(ctx, ActivationAttributes().set_kind(ActivationKind::kLeakyRelu).set_alpha(alpha));
}

Status convert_gelu(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const std::string approximate, ctx.attribute_string("approximate", "none"));
  if (approximate != "none" && approximate != "tanh")
    return ctx.invalid("attribute 'approximate' is '{}', expected 'none' or 'tanh'", approximate);
  return activation(ctx, ActivationAttributes().set_kind(approximate == "tanh" ? ActivationKind::kGeluTanh
                                                                               : ActivationKind::kGeluErf));
}

Status convert_hard_sigmoid(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const double alpha, ctx.attribute_float("alpha", 0.2));
  TO_ASSIGN_OR_RETURN(const double beta, ctx.attribute_float("beta", 0.5));
  return activation(ctx, ActivationAttributes().set_kind(ActivationKind::kHardSigmoid).set_alpha(alpha).set_beta(beta));
}

Status convert_hard_swish(NodeContext& ctx) {
  // ONNX's HardSwish is x * max(0, min(1, x/6 + 1/2)): the layer's defaults.
  return activation(ctx, ActivationAttributes().set_kind(ActivationKind::kHardSwish).set_alpha(1.0 / 6.0).set_beta(0.5));
}

Status convert_softplus(NodeContext& ctx) {
  return activation(ctx, ActivationAttributes().set_kind(ActivationKind::kSoftplus).set_alpha(1.0));
}

Status convert_clip(NodeContext& ctx) {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  if (ctx.has_input(1)) {
    TO_ASSIGN_OR_RETURN(low, ctx.scalar_input(1));
  }
  if (ctx.has_input(2)) {
    TO_ASSIGN_OR_RETURN(high, ctx.scalar_input(2));
  }
  return activation(ctx, ActivationAttributes().set_kind(ActivationKind::kClip).set_alpha(low).set_beta(high));
}

Status convert_where(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor condition, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor a, ctx.input(1));
  TO_ASSIGN_OR_RETURN(const Tensor b, ctx.input(2));
  TO_RETURN_IF_ERROR(check_same_type(ctx, a, b));
  return ctx.set_output(0, ctx.net().select(condition, a, b, SelectAttributes().set_name(ctx.layer_name())));
}

Status convert_cast(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t to, ctx.attribute_int("to", 0));
  const std::optional<DataType> type = data_type_of_onnx(static_cast<int32_t>(to));
  if (!type) return ctx.refuse("attribute 'to' = {} is not supported", onnx_type_name(static_cast<int32_t>(to)));
  return cast_to(ctx, *type);
}

}  // namespace

Status cast_to(NodeContext& ctx, DataType type) {
  // `saturate` only concerns casts to float8: 1 (the default) clamps overflow to the largest
  // finite value, which the cast layer does not (docs/ops.md: e4m3 overflow gives NaN); 0 is the
  // layer's rule.
  TO_ASSIGN_OR_RETURN(const int64_t saturate, ctx.attribute_int("saturate", 1));
  if ((type == DataType::kFloat8E4M3 || type == DataType::kFloat8E5M2) && saturate != 0)
    return ctx.refuse("a saturating cast to {} (saturate {}) is not supported; the cast layer overflows to NaN or inf "
                      "(saturate 0)",
                      data_type_name(type), saturate);
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  return ctx.set_output(0, ctx.net().cast(x, CastAttributes().set_output_type(type).set_name(ctx.layer_name())));
}

namespace {

Status convert_identity(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  return ctx.set_output(0, x);
}

Status convert_dropout(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t seed, ctx.attribute_int("seed", 0));
  (void)seed;  // no randomness at inference
  if (ctx.has_input(2)) {
    TO_ASSIGN_OR_RETURN(const double training, ctx.scalar_input(2));
    if (training != 0.0) return ctx.refuse("training_mode is true; only inference (an identity) is supported");
  }
  TO_RETURN_IF_ERROR(ctx.only_outputs(1));
  return convert_identity(ctx);
}

#define TO_BINARY_(Onnx, Op) {#Onnx, [](NodeContext& c) { return binary(c, ElementwiseOp::k##Op); }}
#define TO_UNARY_(Onnx, Op) {#Onnx, [](NodeContext& c) { return unary(c, UnaryOp::k##Op); }}
#define TO_ACTIVATION_(Onnx, Kind) \
  {#Onnx, [](NodeContext& c) { return activation(c, ActivationAttributes().set_kind(ActivationKind::k##Kind)); }}

}  // namespace

const std::vector<OpConverter>& pointwise_converters() {
  static const std::vector<OpConverter> converters = {
      TO_BINARY_(Add, Add), TO_BINARY_(Sub, Sub), TO_BINARY_(Mul, Mul), TO_BINARY_(Div, Div), TO_BINARY_(Pow, Pow),
      TO_BINARY_(Equal, Equal), TO_BINARY_(Less, Less), TO_BINARY_(Greater, Greater),
      TO_BINARY_(LessOrEqual, LessEqual), TO_BINARY_(GreaterOrEqual, GreaterEqual), TO_BINARY_(And, And),
      TO_BINARY_(Or, Or),
      {"Max", [](NodeContext& c) { return variadic(c, ElementwiseOp::kMax); }},
      {"Min", [](NodeContext& c) { return variadic(c, ElementwiseOp::kMin); }},
      {"Sum", [](NodeContext& c) { return variadic(c, ElementwiseOp::kAdd); }},
      {"Mod", &convert_mod},
      TO_UNARY_(Exp, Exp), TO_UNARY_(Log, Log), TO_UNARY_(Sqrt, Sqrt), TO_UNARY_(Reciprocal, Recip),
      TO_UNARY_(Abs, Abs), TO_UNARY_(Neg, Neg), TO_UNARY_(Sign, Sign), TO_UNARY_(Sin, Sin), TO_UNARY_(Cos, Cos),
      TO_UNARY_(Erf, Erf), TO_UNARY_(Floor, Floor), TO_UNARY_(Ceil, Ceil), TO_UNARY_(Round, Round),
      TO_ACTIVATION_(Relu, Relu), TO_ACTIVATION_(Sigmoid, Sigmoid), TO_ACTIVATION_(Tanh, Tanh),
      {"LeakyRelu", &convert_leaky_relu}, {"Gelu", &convert_gelu}, {"HardSigmoid", &convert_hard_sigmoid},
      {"HardSwish", &convert_hard_swish}, {"Softplus", &convert_softplus}, {"Clip", &convert_clip},
      {"Where", &convert_where}, {"Cast", &convert_cast}, {"Identity", &convert_identity},
      {"Dropout", &convert_dropout},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
