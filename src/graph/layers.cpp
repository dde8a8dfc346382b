// The op table's and the attribute enumerations' names and properties (layers.h), all expanded
// from their X-macro tables.
#include "tensoracle/layers.h"

#include <iterator>

namespace tensoracle {

namespace {

// Names in declaration order: enum value i is named names[i] (both expand the same table).
template <typename E, size_t N>
std::string_view name_in(const std::string_view (&names)[N], E value) {
  const auto i = static_cast<size_t>(value);
  return i < N ? names[i] : std::string_view("unknown");
}

template <typename E, size_t N>
std::optional<E> parse_in(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

#define TO_OP_NAME_(Kind, name, Attributes, category) #name,
constexpr std::string_view kOpKindNames[] = {TENSORACLE_OP_KINDS(TO_OP_NAME_)};
#undef TO_OP_NAME_

#define TO_NAME_(Value, ...) TO_FIRST_(__VA_ARGS__, ~)
#define TO_FIRST_(name, ...) name,
constexpr std::string_view kElementwiseOpNames[] = {TENSORACLE_ELEMENTWISE_OPS(TO_NAME_)};
constexpr std::string_view kUnaryOpNames[] = {TENSORACLE_UNARY_OPS(TO_NAME_)};
constexpr std::string_view kActivationKindNames[] = {TENSORACLE_ACTIVATION_KINDS(TO_NAME_)};
constexpr std::string_view kReduceOpNames[] = {TENSORACLE_REDUCE_OPS(TO_NAME_)};
constexpr std::string_view kPoolingKindNames[] = {TENSORACLE_POOLING_KINDS(TO_NAME_)};
constexpr std::string_view kResizeModeNames[] = {TENSORACLE_RESIZE_MODES(TO_NAME_)};
constexpr std::string_view kResizeCoordinatesNames[] = {TENSORACLE_RESIZE_COORDINATES(TO_NAME_)};
constexpr std::string_view kPadModeNames[] = {TENSORACLE_PAD_MODES(TO_NAME_)};
constexpr std::string_view kGridSampleModeNames[] = {TENSORACLE_GRID_SAMPLE_MODES(TO_NAME_)};
constexpr std::string_view kGridSamplePaddingNames[] = {TENSORACLE_GRID_SAMPLE_PADDINGS(TO_NAME_)};
#undef TO_FIRST_
#undef TO_NAME_

}  // namespace

std::string_view op_kind_name(OpKind kind) { return name_in(kOpKindNames, kind); }
std::optional<OpKind> parse_op_kind(std::string_view name) { return parse_in<OpKind>(kOpKindNames, name); }
const std::vector<OpKind>& all_op_kinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> out;
    for (size_t i = 0; i < std::size(kOpKindNames); ++i) out.push_back(static_cast<OpKind>(i));
    return out;
  }();
  return kinds;
}

OpCategory op_category(OpKind kind) {
#define TO_CATEGORY_pointwise OpCategory::kPointwise
#define TO_CATEGORY_compute OpCategory::kCompute
#define TO_CATEGORY_data OpCategory::kData
#define TO_CATEGORY_plugin OpCategory::kPlugin
#define TO_OP_CATEGORY_(Kind, name, Attributes, category) \
  case OpKind::k##Kind: return TO_CATEGORY_##category;
  switch (kind) { TENSORACLE_OP_KINDS(TO_OP_CATEGORY_) }
#undef TO_OP_CATEGORY_
  return OpCategory::kCompute;
}

ElementwiseClass elementwise_class(ElementwiseOp op) {
#define TO_CLASS_arithmetic ElementwiseClass::kArithmetic
#define TO_CLASS_comparison ElementwiseClass::kComparison
#define TO_CLASS_logical ElementwiseClass::kLogical
#define TO_ELEMENTWISE_CLASS_(Op, name, op_class) \
  case ElementwiseOp::k##Op: return TO_CLASS_##op_class;
  switch (op) { TENSORACLE_ELEMENTWISE_OPS(TO_ELEMENTWISE_CLASS_) }
#undef TO_ELEMENTWISE_CLASS_
  return ElementwiseClass::kArithmetic;
}

bool unary_takes_signed_integers(UnaryOp op) {
#define TO_INPUTS_floating false
#define TO_INPUTS_signed true
#define TO_UNARY_INPUTS_(Op, name, inputs) \
  case UnaryOp::k##Op: return TO_INPUTS_##inputs;
  switch (op) { TENSORACLE_UNARY_OPS(TO_UNARY_INPUTS_) }
#undef TO_UNARY_INPUTS_
  return false;
}

namespace {
struct ActivationRow {
  double alpha, beta;
  bool parameters;
};
ActivationRow activation_row(ActivationKind kind) {
#define TO_ACTIVATION_ROW_(Kind, name, alpha, beta, parameters) \
  case ActivationKind::k##Kind: return {alpha, beta, parameters};
  switch (kind) { TENSORACLE_ACTIVATION_KINDS(TO_ACTIVATION_ROW_) }
#undef TO_ACTIVATION_ROW_
  return {0.0, 0.0, false};
}
}  // namespace

double default_alpha(ActivationKind kind) { return activation_row(kind).alpha; }
double default_beta(ActivationKind kind) { return activation_row(kind).beta; }
bool reads_alpha_beta(ActivationKind kind) { return activation_row(kind).parameters; }

OpAttributes default_attributes(OpKind kind) {
#define TO_DEFAULT_CASE_(Kind, name, Attributes, category) \
  case OpKind::k##Kind: return Attributes{};
  switch (kind) { TENSORACLE_OP_KINDS(TO_DEFAULT_CASE_) }
#undef TO_DEFAULT_CASE_
  return ConstantAttributes{};
}

#define TO_ENUM_NAMES_(Type)                                                                             \
  std::string_view enum_name(Type v) { return name_in(k##Type##Names, v); }                              \
  template <>                                                                                            \
  std::optional<Type> parse_enum<Type>(std::string_view name) { return parse_in<Type>(k##Type##Names, name); } \
  template <>                                                                                            \
  const std::vector<std::string_view>& enum_names<Type>() {                                              \
    static const std::vector<std::string_view> names(std::begin(k##Type##Names), std::end(k##Type##Names)); \
    return names;                                                                                        \
  }

TO_ENUM_NAMES_(ElementwiseOp)
TO_ENUM_NAMES_(UnaryOp)
TO_ENUM_NAMES_(ActivationKind)
TO_ENUM_NAMES_(ReduceOp)
TO_ENUM_NAMES_(PoolingKind)
TO_ENUM_NAMES_(ResizeMode)
TO_ENUM_NAMES_(ResizeCoordinates)
TO_ENUM_NAMES_(PadMode)
TO_ENUM_NAMES_(GridSampleMode)
TO_ENUM_NAMES_(GridSamplePadding)
#undef TO_ENUM_NAMES_

}  // namespace tensoracle
