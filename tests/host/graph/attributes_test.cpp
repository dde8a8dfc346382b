// Typed attributes: every op's struct converts to its AttributeMap and back through its field
// list without loss (a new op or field is covered without touching this file), a map with an
// unknown key, a value of the wrong type or an unknown name is refused naming the layer, the
// attribute and the value, and a defined layer stores the resolved struct.
#include <gtest/gtest.h>

#include <string>

#include "tensoracle/network.h"

namespace tensoracle {
namespace {

template <typename T>
using Field = std::remove_cv_t<std::remove_reference_t<T>>;

// A value of the field's type that differs from `current` (its default).
template <typename T>
T other_value(const T& current) {
  if constexpr (std::is_same_v<T, bool>) {
    return !current;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return current == 3 ? 4 : 3;
  } else if constexpr (std::is_same_v<T, double>) {
    return current == 0.25 ? 0.5 : 0.25;
  } else if constexpr (std::is_same_v<T, std::optional<double>>) {
    return current ? std::optional<double>() : std::optional<double>(0.75);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return current + "x";
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    return current == std::vector<int64_t>{2, 1} ? std::vector<int64_t>{3} : std::vector<int64_t>{2, 1};
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    return current == std::vector<double>{1.5, 2.0} ? std::vector<double>{3.0} : std::vector<double>{1.5, 2.0};
  } else if constexpr (std::is_same_v<T, DataType>) {
    return current == DataType::kFloat16 ? DataType::kInt8 : DataType::kFloat16;
  } else if constexpr (std::is_same_v<T, Dims>) {
    return current == Dims{2, 3} ? Dims{4} : Dims{2, 3};
  } else if constexpr (std::is_same_v<T, std::vector<DataType>>) {
    return {DataType::kFloat16, DataType::kInt32};
  } else if constexpr (std::is_same_v<T, std::vector<Dims>>) {
    return {Dims{2, 4}, Dims{3, -1, 1}, Dims{}};
  } else {
    static_assert(std::is_enum_v<T>, "a field type this test does not know: add a value for it");
    const auto& names = enum_names<T>();
    return *parse_enum<T>(names[enum_name(current) == names.back() ? 0 : names.size() - 1]);
  }
}

// Every field of `a` set to another value than its default.
OpAttributes with_every_field_changed(OpAttributes a) {
  std::visit(
      [](auto& s) {
        Field<decltype(s)>::visit_fields([&](const char*, auto member) { s.*member = other_value(s.*member); });
      },
      a);
  return a;
}

// Field-by-field equality through the field list.
bool same_fields(const OpAttributes& x, const OpAttributes& y) {
  if (x.index() != y.index()) return false;
  bool same = true;
  std::visit(
      [&](const auto& a) {
        const auto& b = std::get<Field<decltype(a)>>(y);
        Field<decltype(a)>::visit_fields([&](const char*, auto member) { same &= a.*member == b.*member; });
      },
      x);
  return same;
}

std::vector<std::string> field_names(const OpAttributes& a) {
  std::vector<std::string> names;
  std::visit([&](const auto& s) { Field<decltype(s)>::visit_fields([&](const char* f, auto) { names.push_back(f); }); }, a);
  return names;
}

TEST(Attributes, EveryOpsStructRoundTripsThroughItsMap) {
  for (OpKind kind : all_op_kinds()) {
    SCOPED_TRACE(std::string(op_kind_name(kind)));
    const OpAttributes defaults = default_attributes(kind);
    ASSERT_EQ(op_kind_of_attributes(defaults), kind);
    for (const OpAttributes& original : {defaults, with_every_field_changed(defaults)}) {
      const AttributeMap map = to_attribute_map(original);
      auto back = attributes_from_map(kind, map, "layer");
      ASSERT_TRUE(back.is_ok()) << back.status().to_string();
      EXPECT_TRUE(same_fields(*back, original));
      EXPECT_EQ(to_attribute_map(*back), map);
    }
    // With every field set, every field is in the map under its name (a list of shapes `<p>_shapes`
    // under `<p>_ranks` and `<p>_dims`).
    const AttributeMap changed = to_attribute_map(with_every_field_changed(defaults));
    for (const std::string& field : field_names(defaults)) {
      const std::string suffix = "_shapes";
      if (field.size() > suffix.size() && field.compare(field.size() - suffix.size(), suffix.size(), suffix) == 0) {
        const std::string prefix = field.substr(0, field.size() - suffix.size());
        EXPECT_TRUE(changed.count(prefix + "_ranks") && changed.count(prefix + "_dims")) << field;
      } else {
        EXPECT_TRUE(changed.count(field)) << field;
      }
    }
    // An empty map is the struct's defaults.
    auto from_empty = attributes_from_map(kind, {}, "layer");
    ASSERT_TRUE(from_empty.is_ok()) << from_empty.status().to_string();
    EXPECT_TRUE(same_fields(*from_empty, defaults));
  }
}

std::string error_of(OpKind kind, const AttributeMap& map) {
  auto r = attributes_from_map(kind, map, "my_layer");
  EXPECT_FALSE(r.is_ok());
  return r.is_ok() ? "" : r.status().message();
}

void expect_contains(const std::string& text, const std::string& fragment) {
  EXPECT_NE(text.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << text;
}

TEST(Attributes, UnknownKeyIsRefusedNamingTheLayerTheKeyAndTheFields) {
  const std::string e = error_of(OpKind::kSoftmax, {{"axis", int64_t{1}}, {"axes", std::vector<int64_t>{1}}});
  expect_contains(e, "layer 'my_layer' (softmax)");
  expect_contains(e, "unknown attribute 'axes' = [1]");
  expect_contains(e, "softmax takes: axis");
  expect_contains(error_of(OpKind::kSelect, {{"op", std::string("add")}}), "select takes: none");
}

TEST(Attributes, WrongValueTypeIsRefusedNamingTheAttributeAndTheValue) {
  std::string e = error_of(OpKind::kSoftmax, {{"axis", std::string("one")}});
  expect_contains(e, "layer 'my_layer' (softmax): attribute 'axis' must be an integer");
  expect_contains(e, "\"one\" (a string)");
  e = error_of(OpKind::kMatMul, {{"transpose_a", int64_t{1}}});
  expect_contains(e, "attribute 'transpose_a' must be a bool; got 1 (an integer)");
  e = error_of(OpKind::kConvolution, {{"stride", 2.5}});
  expect_contains(e, "attribute 'stride' must be a list of integers; got 2.5 (a number)");
  e = error_of(OpKind::kResize, {{"scales", std::string("2x")}});
  expect_contains(e, "attribute 'scales' must be a list of numbers");
}

TEST(Attributes, UnknownNamesAreRefusedListingTheKnownOnes) {
  std::string e = error_of(OpKind::kElementwise, {{"op", std::string("plus")}});
  expect_contains(e, "attribute 'op' has an unknown value \"plus\" (one of add, sub, mul");
  e = error_of(OpKind::kCast, {{"output_type", std::string("fp128")}});
  expect_contains(e, "layer 'my_layer' (cast): attribute 'output_type' has an unknown type \"fp128\"");
  e = error_of(OpKind::kPlugin, {{"output_types", std::string("fp16,nope")}});
  expect_contains(e, "attribute 'output_types' has an unknown type \"nope\"");
}

TEST(Attributes, InconsistentShapeListsAreRefused) {
  std::string e = error_of(OpKind::kPlugin, {{"output_ranks", std::vector<int64_t>{2, 3}}, {"output_dims", std::vector<int64_t>{1, 2, 3}}});
  expect_contains(e, "attribute 'output_ranks' [2,3] does not fit the 3 dims of 'output_dims'");
  e = error_of(OpKind::kPlugin, {{"output_ranks", std::vector<int64_t>{1}}, {"output_dims", std::vector<int64_t>{1, 2}}});
  expect_contains(e, "attribute 'output_dims' has 2 dims but the ranks [1] account for 1");
  e = error_of(OpKind::kPlugin, {{"output_ranks", std::vector<int64_t>{-1}}, {"output_dims", std::vector<int64_t>{}}});
  expect_contains(e, "'output_ranks' [-1] does not fit");
}

TEST(Attributes, IntegersAreAcceptedWhereNumbersAreExpected) {
  auto a = attributes_from_map(OpKind::kLayerNorm, {{"epsilon", int64_t{1}}}, "ln");
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_EQ(std::get<LayerNormAttributes>(*a).epsilon, 1.0);
  auto r = attributes_from_map(OpKind::kResize, {{"scales", std::vector<int64_t>{2, 3}}}, "r");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(std::get<ResizeAttributes>(*r).scales, (std::vector<double>{2.0, 3.0}));
}

TEST(Attributes, AddLayerErrorsBecomeTheNetworksNamingTheLayer) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {2, 3});
  EXPECT_TRUE(net.add_layer(OpKind::kSoftmax, {x}, {{"axis", int64_t{0}}, {"epsilon", 0.1}}, "sm").empty());
  expect_contains(net.status().message(), "layer 'sm' (softmax): unknown attribute 'epsilon'");
}

TEST(Attributes, ConstantsAreAddedOnlyWithTheirBytes) {
  Network net;
  EXPECT_TRUE(net.add_layer(OpKind::kConstant, {}, {{"dtype", std::string("fp32")}, {"shape", std::vector<int64_t>{2}}}, "c").empty());
  expect_contains(net.status().message(), "layer 'c': constants are added with add_constant");
  Network typed;
  EXPECT_TRUE(typed.add_layer({}, ConstantAttributes().set_shape({2}).set_name("c")).empty());
  expect_contains(typed.status().message(), "constants are added with add_constant");
}

TEST(Attributes, AValueOutsideItsEnumerationIsRefusedAtDefinition) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4});
  EXPECT_FALSE(net.elementwise(x, x, ElementwiseAttributes().set_op(static_cast<ElementwiseOp>(200)).set_name("e")).valid());
  expect_contains(net.status().message(), "layer 'e' (elementwise): attribute 'op' holds 200");
  Network cast;
  Tensor y = cast.add_input("y", DataType::kFloat32, {4});
  EXPECT_FALSE(cast.cast(y, CastAttributes().set_output_type(static_cast<DataType>(99))).valid());
  expect_contains(cast.status().message(), "attribute 'output_type' holds 99");
}

TEST(Attributes, NodesHoldTheirOpsStructWithDependentDefaultsResolved) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {1, 2, 8, 8});
  Tensor y = net.activation(x, ActivationAttributes().set_kind(ActivationKind::kLeakyRelu).set_name("leaky"));
  Tensor p = net.pooling(x, PoolingAttributes().set_window({2, 2}));
  Tensor z = net.add_layer(OpKind::kActivation, {x}, {{"kind", std::string("hard_swish")}}, "hs")[0];
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
  const Node& leaky = net.node(static_cast<size_t>(net.tensor(y).producer));
  ASSERT_NE(leaky.attributes<ActivationAttributes>(), nullptr);
  EXPECT_EQ(leaky.attributes<ActivationAttributes>()->alpha, std::optional<double>(0.01));
  EXPECT_EQ(leaky.attributes<ActivationAttributes>()->beta, std::optional<double>(0.0));
  EXPECT_EQ(leaky.attributes<ActivationAttributes>()->name, "leaky");
  EXPECT_EQ(leaky.attributes<PoolingAttributes>(), nullptr);
  const Node& pool = net.node(static_cast<size_t>(net.tensor(p).producer));
  EXPECT_EQ(pool.attributes<PoolingAttributes>()->stride, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(pool.attribute_map().at("stride")), (std::vector<int64_t>{2, 2}));
  const Node& hs = net.node(static_cast<size_t>(net.tensor(z).producer));
  EXPECT_EQ(hs.attributes<ActivationAttributes>()->alpha, std::optional<double>(1.0 / 6.0));
  EXPECT_EQ(hs.attributes<ActivationAttributes>()->beta, std::optional<double>(0.5));
}

TEST(Attributes, ANodesStructRedefinesTheSameLayer) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {2, 6});
  net.mark_output(net.layer_norm(x, {}, {}, LayerNormAttributes().set_axis(-1).set_epsilon(1e-3).set_name("ln")), "y");
  ASSERT_TRUE(net.status().is_ok());
  Network copy;
  Tensor cx = copy.add_input("x", DataType::kFloat32, {2, 6});
  const Node& ln = net.node(0);
  std::vector<Tensor> outs = copy.add_layer({cx, Tensor{}, Tensor{}}, ln.op_attributes);  // scale and bias omitted
  ASSERT_EQ(outs.size(), 1u) << copy.status().to_string();
  copy.mark_output(outs[0], "y");
  EXPECT_EQ(copy.node(0).name, "ln");
  EXPECT_EQ(canonical_form(copy).value(), canonical_form(net).value());
}

}  // namespace
}  // namespace tensoracle
